package control

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/aos-run/aos/internal/mission"
)

// ProtocolVersion is the only protocol version this build speaks.
const ProtocolVersion = 1

// MaxFrame bounds a frame's JSON body, in bytes.
const MaxFrame = 1 << 20

// Kinds of envelope.
const (
	KindRequest  = "request"
	KindResponse = "response"
	KindEvent    = "event"
	KindError    = "error"
)

// Envelope is the LocalControlEnvelope: the outer schema of every frame.
type Envelope struct {
	ProtocolVersion int             `json:"protocol_version"`
	Kind            string          `json:"kind"`
	MessageID       string          `json:"message_id"`
	CorrelationID   string          `json:"correlation_id,omitempty"`
	EventSequence   *uint64         `json:"event_sequence,omitempty"`
	Operation       string          `json:"operation,omitempty"`
	Payload         json.RawMessage `json:"payload,omitempty"`
}

// Request is a request envelope's payload (LocalControlRequest).
// CommandID is required on every mutating operation.
type Request struct {
	CommandID string          `json:"command_id,omitempty"`
	Args      json.RawMessage `json:"args,omitempty"`
	Cursor    *Marker         `json:"cursor,omitempty"`
}

// Response is a response envelope's payload (LocalControlResponse).
// Replayed says Result is the original result of an earlier request with
// the same command_id.
type Response struct {
	Result    json.RawMessage `json:"result,omitempty"`
	CommandID string          `json:"command_id,omitempty"`
	Replayed  bool            `json:"replayed,omitempty"`
	Snapshot  *Marker         `json:"snapshot,omitempty"`
}

// Marker names a point in one daemon's event stream: after its
// EventSequence, and in the durable journal, after JournalEventID.
type Marker struct {
	DaemonID       string `json:"daemon_id"`
	EventSequence  uint64 `json:"event_sequence"`
	JournalEventID int64  `json:"journal_event_id"`
}

// Event is an event envelope's payload (LocalControlEvent): the journal
// event, its type, subject (the mission) and revision (its journal id).
type Event struct {
	Type     string        `json:"type"`
	Subject  string        `json:"subject"`
	Revision int64         `json:"revision"`
	Event    mission.Event `json:"event"`
}

// Error codes (LocalControlError).
const (
	CodeMalformedFrame       = "malformed_frame"
	CodeUnsupportedVersion   = "unsupported_version"
	CodeUnsupportedOperation = "unsupported_operation"
	CodeInvalidState         = "invalid_state"
	CodePermissionDenied     = "permission_denied"
	CodeCommandIDConflict    = "command_id_conflict"
	CodeReplayUnavailable    = "replay_unavailable"
	CodeInternal             = "internal"
	// CodeInvalidArgument: the arguments were well-formed but refused by
	// the mission service (a bad model, a workspace outside the root).
	CodeInvalidArgument = "invalid_argument"
	// CodeNotFound: an id names nothing.
	CodeNotFound = "not_found"
)

// Recovery is what an error says about how to recover.
type Recovery struct {
	SnapshotRequired bool    `json:"snapshot_required,omitempty"`
	Snapshot         *Marker `json:"snapshot,omitempty"`
	ReplayFloor      uint64  `json:"replay_floor,omitempty"`
}

// Error is an error envelope's payload, and the client's error type.
// Message is safe to show: no credential, private path or unbounded text.
type Error struct {
	Code      string    `json:"code"`
	Message   string    `json:"message"`
	Retryable bool      `json:"retryable,omitempty"`
	Recovery  *Recovery `json:"recovery,omitempty"`
}

// Error returns "control: <code>: <message>".
func (e *Error) Error() string { return "control: " + e.Code + ": " + e.Message }

// Is matches an *Error with the same Code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

func errorf(code, format string, a ...any) *Error {
	return &Error{Code: code, Message: bound(fmt.Sprintf(format, a...), 300)}
}

// bound cuts s to n bytes.
func bound(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// errFrameTooLarge: the length prefix exceeds MaxFrame; the stream cannot
// be resynchronised.
var errFrameTooLarge = errorf(CodeMalformedFrame, "frame larger than %d bytes", MaxFrame)

// WriteFrame writes env as a 4-byte big-endian length and its JSON.
func WriteFrame(w io.Writer, env Envelope) error {
	b, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("control: encode frame: %w", err)
	}
	if len(b) > MaxFrame {
		return fmt.Errorf("control: frame of %d bytes exceeds %d", len(b), MaxFrame)
	}
	buf := make([]byte, 4, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	_, err = w.Write(append(buf, b...))
	return err
}

// ReadFrame reads one frame's body. A length over MaxFrame is
// errFrameTooLarge, with the body left unread.
func ReadFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return nil, errFrameTooLarge
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// strict decodes b into v, refusing unknown fields and trailing data.
func strict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}

// DecodeEnvelope parses a frame body: the version first (an unknown
// version is unsupported_version, whatever else it holds), then the whole
// envelope strictly (an unknown field is malformed_frame).
func DecodeEnvelope(b []byte) (Envelope, *Error) {
	var v struct {
		ProtocolVersion *int `json:"protocol_version"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.ProtocolVersion == nil {
		return Envelope{}, errorf(CodeMalformedFrame, "the frame is not a JSON envelope with a protocol_version")
	}
	if *v.ProtocolVersion != ProtocolVersion {
		return Envelope{}, errorf(CodeUnsupportedVersion, "protocol_version %d is not supported; this daemon speaks %d", *v.ProtocolVersion, ProtocolVersion)
	}
	var env Envelope
	if err := strict(b, &env); err != nil {
		return Envelope{}, errorf(CodeMalformedFrame, "envelope: %s", safeJSONError(err))
	}
	switch env.Kind {
	case KindRequest, KindResponse, KindEvent, KindError:
	default:
		return env, errorf(CodeMalformedFrame, "kind must be request, response, event or error")
	}
	if env.MessageID == "" || len(env.MessageID) > 128 {
		return env, errorf(CodeMalformedFrame, "message_id must be 1..128 bytes")
	}
	return env, nil
}

// safeJSONError is a decode error's text without the input it quotes.
func safeJSONError(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("invalid JSON at offset %d", se.Offset)
	}
	return bound(err.Error(), 120)
}
