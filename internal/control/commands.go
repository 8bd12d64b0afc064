package control

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aos-run/aos/internal/hoststate"
	"github.com/aos-run/aos/internal/mission"
)

// maxCommands is how many command records are kept; the oldest go first.
const maxCommands = 1000

// commandRecord is one command_id's durable record. A pending record is
// a command accepted and dispatched whose result was not recorded (the
// daemon died in between). For a mission creation (onceOps) the mission's
// id derives from the command_id, so the repeat runs it again and finds
// the mission or makes it once; for the others the outcome is unknown,
// and a repeat is invalid_state rather than a second mutation.
type commandRecord struct {
	Operation  string          `json:"operation"`
	ArgsSHA256 string          `json:"argsSha256"`
	Status     string          `json:"status"` // pending | done
	Result     json.RawMessage `json:"result,omitempty"`
	At         int64           `json:"at"`
}

type commandState struct {
	Commands map[string]commandRecord `json:"commands"`
	Order    []string                 `json:"order"` // oldest first
}

func decodeCommands(snap hoststate.Snapshot) (commandState, error) {
	st := commandState{Commands: map[string]commandRecord{}}
	if snap.State != nil {
		if err := json.Unmarshal(snap.State, &st); err != nil {
			return st, fmt.Errorf("control: command records: %w", err)
		}
		if st.Commands == nil {
			st.Commands = map[string]commandRecord{}
		}
	}
	return st, nil
}

// argsHash is the SHA-256 of the operation and its compacted arguments.
func argsHash(op string, args json.RawMessage) string {
	var c bytes.Buffer
	if len(args) > 0 {
		_ = json.Compact(&c, args)
	}
	sum := sha256.Sum256(append([]byte(op+"\x00"), c.Bytes()...))
	return hex.EncodeToString(sum[:])
}

func validCommandID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' || r == ':'
		if !ok {
			return false
		}
	}
	return true
}

// errReplayed carries a recorded result out of the admission update.
type errReplayed struct{ result json.RawMessage }

func (e *errReplayed) Error() string { return "replayed" }

// mutate runs fn once per command_id: a repeat with the same operation and
// arguments returns the recorded result without calling fn; another
// operation or other arguments is command_id_conflict. A command fn
// refuses leaves no record.
func (s *Server) mutate(ctx context.Context, op, id string, args json.RawMessage, fn func() (any, error)) (Response, *Error) {
	if !validCommandID(id) {
		return Response{}, errorf(CodeMalformedFrame, "a mutating operation needs a command_id of 1..128 [A-Za-z0-9._:-]")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := argsHash(op, args)
	store := s.opts.Commands
	_, err := store.Update(ctx, func(snap hoststate.Snapshot) (json.RawMessage, error) {
		st, err := decodeCommands(snap)
		if err != nil {
			return nil, err
		}
		if rec, ok := st.Commands[id]; ok {
			switch {
			case rec.Operation != op || rec.ArgsSHA256 != h:
				return nil, errorf(CodeCommandIDConflict, "command_id %s was used with another operation or other arguments", id)
			case rec.Status == "done":
				return nil, &errReplayed{result: rec.Result}
			case onceOps[op]:
				return nil, nil // pending after a crash: run it again, it finds or makes its one mission
			}
			return nil, errorf(CodeInvalidState, "command %s was accepted before a restart and its outcome is unknown; look before repeating it with a new command_id", id)
		}
		st.Commands[id] = commandRecord{Operation: op, ArgsSHA256: h, Status: "pending", At: time.Now().UnixMilli()}
		st.Order = append(st.Order, id)
		for len(st.Order) > maxCommands {
			delete(st.Commands, st.Order[0])
			st.Order = st.Order[1:]
		}
		return json.Marshal(st)
	})
	var ce *Error
	var rep *errReplayed
	switch {
	case errors.As(err, &rep):
		return Response{Result: rep.result, CommandID: id, Replayed: true}, nil
	case errors.As(err, &ce):
		return Response{}, ce
	case err != nil:
		return Response{}, s.internal("admit command", err)
	}
	res, ferr := fn()
	var out json.RawMessage
	if ferr == nil {
		out, ferr = json.Marshal(res)
	}
	_, err = store.Update(ctx, func(snap hoststate.Snapshot) (json.RawMessage, error) {
		st, err := decodeCommands(snap)
		if err != nil {
			return nil, err
		}
		var me *mission.Error
		if ferr != nil && !errors.As(ferr, &me) {
			return nil, nil // a fault, not a refusal: the outcome is unknown, the record stays pending
		}
		if ferr != nil {
			delete(st.Commands, id) // refused by the service: no substitute record
			for i, x := range st.Order {
				if x == id {
					st.Order = append(st.Order[:i:i], st.Order[i+1:]...)
					break
				}
			}
		} else {
			rec := st.Commands[id]
			rec.Status, rec.Result = "done", out
			st.Commands[id] = rec
		}
		return json.Marshal(st)
	})
	if ferr != nil {
		return Response{}, s.serviceError(ferr)
	}
	if err != nil {
		return Response{}, s.internal("record command result", err)
	}
	return Response{Result: out, CommandID: id}, nil
}
