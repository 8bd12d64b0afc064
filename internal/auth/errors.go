package auth

import (
	"errors"
	"fmt"
	"time"
)

// Code classifies auth errors; Error.Is matches on it.
type Code string

// Error codes. The API maps each to a status.
const (
	CodeInvalidInput  Code = "invalid_input"
	CodeUnauthorized  Code = "unauthorized"
	CodeConflict      Code = "conflict"
	CodeNotFound      Code = "not_found"
	CodeThrottled     Code = "too_many_attempts"
	CodeUnavailable   Code = "unavailable"
	CodeSetupRequired Code = "setup_required"
	// CodeReauthRequired: the session is too old for this (adding a
	// passkey); log in again.
	CodeReauthRequired Code = "reauth_required"
)

// Error is the package's domain error. Msg is safe to show: it never holds
// a secret nor says which of the password and the code was wrong.
type Error struct {
	Code Code
	Msg  string
	// RetryAfter is how long a throttled caller must wait.
	RetryAfter time.Duration
	Err        error
}

// Error returns "auth: <code>: <message>".
func (e *Error) Error() string {
	s := "auth: " + string(e.Code)
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
	// ErrInvalidInput: the request is malformed; nothing changed.
	ErrInvalidInput = &Error{Code: CodeInvalidInput}
	// ErrUnauthorized: a wrong credential, with no hint which part.
	ErrUnauthorized = &Error{Code: CodeUnauthorized}
	// ErrConflict: the state does not allow it (setup done, say).
	ErrConflict = &Error{Code: CodeConflict}
	// ErrNotFound: an id names nothing.
	ErrNotFound = &Error{Code: CodeNotFound}
	// ErrThrottled: too many failed attempts; retry after RetryAfter.
	ErrThrottled = &Error{Code: CodeThrottled}
	// ErrUnavailable: the feature is not configured (passkeys on an IP
	// origin).
	ErrUnavailable = &Error{Code: CodeUnavailable}
	// ErrSetupRequired: there is no owner account yet.
	ErrSetupRequired = &Error{Code: CodeSetupRequired}
	// ErrReauthRequired: the session's login is not recent enough.
	ErrReauthRequired = &Error{Code: CodeReauthRequired}
)

func invalid(format string, a ...any) error {
	return &Error{Code: CodeInvalidInput, Msg: fmt.Sprintf(format, a...)}
}

func unauthorized(msg string) error { return &Error{Code: CodeUnauthorized, Msg: msg} }

func conflict(msg string) error { return &Error{Code: CodeConflict, Msg: msg} }

// fault wraps a database or system failure with what was being done.
func fault(doing string, err error) error { return fmt.Errorf("auth: %s: %w", doing, err) }
