package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/store"
)

// RequestCancel cancels a mission (by its id) or a run, and every run below
// it. Runs that hold no lease (queued, waiting) end cancelled at once, with
// their pending waits; running runs see the flag within CancelPoll and end
// cancelled when their logic unwinds.
func (k *Kernel) RequestCancel(ctx context.Context, id string) error {
	err := k.tx(ctx, func(q store.Queries) error {
		rootID := id
		if m, err := q.GetMission(ctx, id); err == nil {
			rootID = m.RootRunID
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if _, err := q.GetRun(ctx, rootID); errors.Is(err, store.ErrNotFound) {
			return &Error{Code: CodeNotFound, Seq: -1, Msg: "no such mission or run " + id}
		} else if err != nil {
			return err
		}
		ids, err := q.DescendantRunIDs(ctx, rootID)
		if err != nil {
			return err
		}
		now := k.now()
		for _, rid := range ids {
			status, err := q.RequestRunCancel(ctx, rid, now)
			if err != nil {
				return err
			}
			if IsTerminal(status) {
				continue
			}
			idle, err := q.CancelIdleRun(ctx, rid, now)
			if err != nil {
				return err
			}
			if !idle {
				continue // running: it sees the flag; its descendants are next
			}
			run, err := q.GetRun(ctx, rid)
			if err != nil {
				return err
			}
			waits, err := q.ListWaits(ctx, store.ListWaitsParams{Status: "pending", RunID: rid})
			if err != nil {
				return err
			}
			for _, w := range waits {
				if err := q.ResolveWait(ctx, store.ResolveWaitParams{ID: w.ID, Status: "cancelled", Actor: "system", Now: now}); err != nil {
					return err
				}
				if err := k.event(ctx, q, w.MissionID, rid, nil, "wait.resolved", map[string]any{"waitId": w.ID, "kind": w.Kind, "status": "cancelled"}); err != nil {
					return err
				}
			}
			if err := k.mirror(ctx, q, run, StatusCancelled, nil, now); err != nil {
				return err
			}
			if err := k.event(ctx, q, run.MissionID, rid, nil, "run.completed", map[string]any{"runId": rid, "status": StatusCancelled}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("request cancel: %w", err)
	}
	k.ring()
	return nil
}

// ResolveResult says what ResolveWait did.
type ResolveResult struct {
	RunID  string
	Status string
}

// ResolveWait resolves a pending wait with resolution (JSON) and re-queues
// its run. A wait that is not pending gives ErrWaitNotPending and changes
// nothing.
func (k *Kernel) ResolveWait(ctx context.Context, waitID string, resolution any, actor string) (ResolveResult, error) {
	res, err := jsonOrEmpty(resolution)
	if err != nil {
		return ResolveResult{}, err
	}
	var out ResolveResult
	err = k.tx(ctx, func(q store.Queries) error {
		w, err := q.GetWait(ctx, waitID)
		if errors.Is(err, store.ErrNotFound) {
			return &Error{Code: CodeNotFound, Seq: -1, Msg: "no such wait " + waitID}
		}
		if err != nil {
			return err
		}
		if w.Status != "pending" {
			return &Error{Code: CodeWaitNotPending, RunID: w.RunID, Seq: w.StepSeq, Msg: "wait is " + w.Status}
		}
		out = ResolveResult{RunID: w.RunID, Status: "resolved"}
		return k.endWait(ctx, q, w, "resolved", res, actor)
	})
	if err != nil {
		return ResolveResult{}, fmt.Errorf("resolve wait: %w", err)
	}
	k.ringWork(ctx)
	return out, nil
}

func (k *Kernel) endWait(ctx context.Context, q store.Queries, w store.Wait, status string, res json.RawMessage, actor string) error {
	now := k.now()
	if err := q.ResolveWait(ctx, store.ResolveWaitParams{ID: w.ID, Status: status, Resolution: res, Actor: actor, Now: now}); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return &Error{Code: CodeWaitNotPending, RunID: w.RunID, Seq: w.StepSeq, Msg: "wait is no longer pending"}
		}
		return err
	}
	if err := q.RequeueWaitingRun(ctx, w.RunID, now); err != nil {
		return err
	}
	run, err := q.GetRun(ctx, w.RunID)
	if err != nil {
		return err
	}
	if run.Status == StatusQueued {
		if err := k.mirror(ctx, q, run, StatusQueued, nil, 0); err != nil {
			return err
		}
	}
	payload := map[string]any{"waitId": w.ID, "kind": w.Kind, "status": status, "actor": actor}
	if len(res) > 0 {
		payload["resolution"] = res
	}
	return k.event(ctx, q, w.MissionID, w.RunID, nil, "wait.resolved", payload)
}

// ExpireWaits expires pending waits past their deadline and re-queues their
// runs, which then see {expired:true}. It returns how many expired.
func (k *Kernel) ExpireWaits(ctx context.Context) (int, error) {
	due, err := k.st.DueWaits(ctx, k.now(), 100)
	if err != nil {
		return 0, fmt.Errorf("expire waits: %w", err)
	}
	n := 0
	for _, w := range due {
		err := k.tx(ctx, func(q store.Queries) error { return k.endWait(ctx, q, w, "expired", nil, "system") })
		if errors.Is(err, ErrWaitNotPending) {
			continue // resolved meanwhile
		}
		if err != nil {
			return n, fmt.Errorf("expire wait %s: %w", w.ID, err)
		}
		n++
	}
	if n > 0 {
		k.ringWork(ctx)
	}
	return n, nil
}

// MaxOwnerMessage is the longest steering message accepted, in bytes.
const MaxOwnerMessage = 32 << 10

// PostOwnerMessage queues a steering message for a run; the run's logic
// reads it through OwnerMessages.
func (k *Kernel) PostOwnerMessage(ctx context.Context, runID, text string) (int64, error) {
	if strings.TrimSpace(text) == "" || len(text) > MaxOwnerMessage || !utf8.ValidString(text) {
		return 0, &Error{Code: CodeInvalidInput, RunID: runID, Seq: -1, Msg: "message must be non-empty UTF-8 of at most 32 KiB"}
	}
	var id int64
	err := k.tx(ctx, func(q store.Queries) error {
		run, err := q.GetRun(ctx, runID)
		if errors.Is(err, store.ErrNotFound) {
			return &Error{Code: CodeNotFound, RunID: runID, Seq: -1, Msg: "no such run"}
		}
		if err != nil {
			return err
		}
		if IsTerminal(run.Status) {
			return &Error{Code: CodeRunEnded, RunID: runID, Seq: -1, Msg: "run is " + run.Status}
		}
		id, err = q.InsertOwnerMessage(ctx, runID, text, k.now())
		if err != nil {
			return err
		}
		return k.event(ctx, q, run.MissionID, runID, nil, "owner.message", map[string]any{"id": id, "text": text})
	})
	if err != nil {
		return 0, fmt.Errorf("post owner message: %w", err)
	}
	k.ring()
	return id, nil
}
