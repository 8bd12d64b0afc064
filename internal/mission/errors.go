package mission

import (
	"errors"
	"fmt"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
)

// Code classifies mission errors; Error.Is matches on it.
type Code string

// Error codes. Front ends map each to a status of their own.
const (
	CodeInvalidInput   Code = "invalid_input"
	CodeNotFound       Code = "not_found"
	CodeConflict       Code = "conflict"
	CodeWaitNotPending Code = "wait_not_pending"
	CodeRunEnded       Code = "run_ended"
	CodeDailyCap       Code = "daily_cap_reached"
	CodeUnauthorized   Code = "unauthorized"
	CodeForbidden      Code = "forbidden"
	CodeGitFailed      Code = "git_failed"
	// CodeModelUnavailable: the model's endpoint is not configured or
	// does not answer, so the model cannot be checked or used now.
	CodeModelUnavailable Code = "model_unavailable"
	// CodeCursorExpired: retention pruned events after the reader's
	// cursor; the reader refetches state and resumes from the latest id.
	CodeCursorExpired Code = "cursor_expired"
)

// Error is the service's domain error. Msg is safe to show to the caller:
// it never holds a secret, a path outside the workspace root or a database
// error's text.
type Error struct {
	Code Code
	Msg  string
	Err  error
}

// Error returns "mission: <code>: <message>".
func (e *Error) Error() string {
	s := "mission: " + string(e.Code)
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
	// ErrInvalidInput: the request is malformed; nothing was written.
	ErrInvalidInput = &Error{Code: CodeInvalidInput}
	// ErrNotFound: an id names nothing.
	ErrNotFound = &Error{Code: CodeNotFound}
	// ErrConflict: the row exists or is in another state.
	ErrConflict = &Error{Code: CodeConflict}
	// ErrWaitNotPending: the wait was already resolved, expired or cancelled.
	ErrWaitNotPending = &Error{Code: CodeWaitNotPending}
	// ErrRunEnded: the run has ended and takes no more input.
	ErrRunEnded = &Error{Code: CodeRunEnded}
	// ErrDailyCap: today's spend has reached the daily cap.
	ErrDailyCap = &Error{Code: CodeDailyCap}
	// ErrUnauthorized: no valid credential.
	ErrUnauthorized = &Error{Code: CodeUnauthorized}
	// ErrForbidden: the credential lacks the scope.
	ErrForbidden = &Error{Code: CodeForbidden}
	// ErrGitFailed: git could not init, inspect or clone (an unreachable
	// remote, a refused authentication); nothing was kept on disk.
	ErrGitFailed = &Error{Code: CodeGitFailed}
	// ErrModelUnavailable: the model's endpoint is not configured or does
	// not answer; nothing was written.
	ErrModelUnavailable = &Error{Code: CodeModelUnavailable}
	// ErrCursorExpired: events after the cursor were pruned by retention
	// (CursorExpiredError says through which position).
	ErrCursorExpired = &Error{Code: CodeCursorExpired}
)

func invalid(format string, a ...any) error {
	return &Error{Code: CodeInvalidInput, Msg: fmt.Sprintf(format, a...)}
}

// translate turns kernel and store errors into mission errors, keeping
// anything else (a database fault) as it is, wrapped with doing.
func translate(doing string, err error) error {
	if err == nil {
		return nil
	}
	var me *Error
	if errors.As(err, &me) {
		return err
	}
	var ke *kernel.Error
	msg := ""
	if errors.As(err, &ke) {
		msg = ke.Msg
	}
	switch {
	case errors.Is(err, kernel.ErrNotFound), errors.Is(err, store.ErrNotFound):
		return &Error{Code: CodeNotFound, Msg: msg, Err: err}
	case errors.Is(err, kernel.ErrInvalidInput):
		return &Error{Code: CodeInvalidInput, Msg: msg, Err: err}
	case errors.Is(err, kernel.ErrWaitNotPending):
		return &Error{Code: CodeWaitNotPending, Msg: msg, Err: err}
	case errors.Is(err, kernel.ErrRunEnded):
		return &Error{Code: CodeRunEnded, Msg: msg, Err: err}
	case errors.Is(err, store.ErrConflict):
		return &Error{Code: CodeConflict, Err: err}
	}
	return fmt.Errorf("mission: %s: %w", doing, err)
}
