package device

import (
	"errors"
	"time"
)

// Code classifies the errors of pairing and device management (the HTTP
// side); the WebSocket protocol's codes are seed 000's (agent.Code*).
type Code string

// Error codes; the API maps each to an HTTP status.
const (
	CodeInvalidInput Code = "invalid_input"
	CodeUnauthorized Code = "unauthorized"
	CodeNotFound     Code = "not_found"
	CodeThrottled    Code = "too_many_attempts"
)

// Error is the package's domain error. Msg is safe to show: it never holds
// a code, a token or a database error's text.
type Error struct {
	Code Code
	Msg  string
	// RetryAfter is how long a throttled caller must wait.
	RetryAfter time.Duration
	Err        error
}

// Error returns "device: <code>: <message>".
func (e *Error) Error() string {
	s := "device: " + string(e.Code)
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches a sentinel *Error with the same Code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code && t.Msg == "" && t.Err == nil
}

// Sentinels for errors.Is.
var (
	// ErrUnauthorized: a wrong, expired, used or revoked code or token,
	// with no hint which.
	ErrUnauthorized = &Error{Code: CodeUnauthorized}
	// ErrNotFound: an id names no live device.
	ErrNotFound = &Error{Code: CodeNotFound}
	// ErrThrottled: too many exchange attempts; retry after RetryAfter.
	ErrThrottled = &Error{Code: CodeThrottled}
	// ErrInvalidInput: the request is malformed; nothing changed.
	ErrInvalidInput = &Error{Code: CodeInvalidInput}
)
