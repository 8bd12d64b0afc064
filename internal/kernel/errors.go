package kernel

import (
	"errors"
	"fmt"
)

// Code classifies kernel errors; Error.Is matches on it.
type Code string

// Error codes.
const (
	CodeNotFound        Code = "not_found"
	CodeInvalidInput    Code = "invalid_input"
	CodeWaitNotPending  Code = "wait_not_pending"
	CodeRunEnded        Code = "run_ended"
	CodeLeaseLost       Code = "lease_lost"
	CodeCancelled       Code = "cancelled"
	CodeShutdown        Code = "shutdown"
	CodeNonDeterminism  Code = "non_determinism"
	CodeBudgetExhausted Code = "budget_exhausted"
	CodeStepFailed      Code = "step_failed"
	CodeReconcileAbort  Code = "reconcile_abort"
)

// Error is the kernel's domain error. Match it with errors.Is against the
// sentinels below, which compare by Code.
type Error struct {
	Code  Code
	RunID string
	Seq   int // -1 when not about a step
	Msg   string
	Err   error
}

func (e *Error) Error() string {
	s := "kernel: " + string(e.Code)
	if e.RunID != "" {
		s += " run " + e.RunID
	}
	if e.Seq >= 0 {
		s += fmt.Sprintf(" step %d", e.Seq)
	}
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches another *Error with the same Code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code && t.RunID == "" && t.Msg == ""
}

func newErr(code Code, runID string, seq int, msg string) *Error {
	return &Error{Code: code, RunID: runID, Seq: seq, Msg: msg}
}

// Sentinels for errors.Is.
var (
	// ErrNotFound: an id names no mission, run, wait or artifact.
	ErrNotFound = &Error{Code: CodeNotFound, Seq: -1}
	// ErrInvalidInput: the input is malformed (not JSON, not hashable, out
	// of range); nothing was written.
	ErrInvalidInput = &Error{Code: CodeInvalidInput, Seq: -1}
	// ErrWaitNotPending: the wait was already resolved, expired or
	// cancelled.
	ErrWaitNotPending = &Error{Code: CodeWaitNotPending, Seq: -1}
	// ErrRunEnded: the run has ended and takes no more input.
	ErrRunEnded = &Error{Code: CodeRunEnded, Seq: -1}
	// ErrLeaseLost: this worker no longer holds the run's lease (fencing).
	ErrLeaseLost = &Error{Code: CodeLeaseLost, Seq: -1}
	// ErrCancelled: the owner cancelled the run.
	ErrCancelled = &Error{Code: CodeCancelled, Seq: -1}
	// ErrShutdown: the worker is shutting down and hands the run over.
	ErrShutdown = &Error{Code: CodeShutdown, Seq: -1}
	// ErrNonDeterminism: replay asked for a different step than recorded.
	ErrNonDeterminism = &Error{Code: CodeNonDeterminism, Seq: -1}
	// ErrBudgetExhausted: a run or daily budget is used up.
	ErrBudgetExhausted = &Error{Code: CodeBudgetExhausted, Seq: -1}
	// ErrStepFailed: a step's exec failed; the failure is journaled and
	// returned identically on replay.
	ErrStepFailed = &Error{Code: CodeStepFailed, Seq: -1}
	// ErrReconcileAbort: the owner chose "abort" for a step that may or may
	// not have run.
	ErrReconcileAbort = &Error{Code: CodeReconcileAbort, Seq: -1}
)

// errSuspend unwinds run logic after the run was durably suspended (a wait
// or a sleep). Logic must return it unchanged; the worker then leaves the
// run alone until it is re-queued.
var errSuspend = errors.New("kernel: run suspended")

// IsSuspend reports whether err is the kernel's suspension signal, which run
// logic must return unchanged.
func IsSuspend(err error) bool { return errors.Is(err, errSuspend) }

// NonDeterminismError says what the journal recorded at a position and what
// the logic asked for on replay.
type NonDeterminismError struct {
	RunID              string
	Seq                int
	RecordedKind, Kind string
	RecordedName, Name string
	RecordedHash, Hash string
}

func (e *NonDeterminismError) Error() string {
	return fmt.Sprintf("kernel: non_determinism run %s step %d: recorded %s/%s (%s), replay asked %s/%s (%s)",
		e.RunID, e.Seq, e.RecordedKind, e.RecordedName, short(e.RecordedHash), e.Kind, e.Name, short(e.Hash))
}

// Is matches ErrNonDeterminism.
func (e *NonDeterminismError) Is(target error) bool { return target == ErrNonDeterminism }

// BudgetExhaustedError says which budget stopped a model call.
type BudgetExhaustedError struct {
	RunID string
	// Scope is usd, turns, wall or daily.
	Scope string
	Limit float64
	Used  float64
}

func (e *BudgetExhaustedError) Error() string {
	return fmt.Sprintf("kernel: budget_exhausted run %s: %s budget %.4g used %.4g", e.RunID, e.Scope, e.Limit, e.Used)
}

// Is matches ErrBudgetExhausted.
func (e *BudgetExhaustedError) Is(target error) bool { return target == ErrBudgetExhausted }

// StepError is a step failure as journaled.
type StepError struct {
	RunID   string
	Seq     int
	Name    string
	Message string
}

func (e *StepError) Error() string {
	return fmt.Sprintf("kernel: step %d (%s) of run %s failed: %s", e.Seq, e.Name, e.RunID, e.Message)
}

// Is matches ErrStepFailed.
func (e *StepError) Is(target error) bool { return target == ErrStepFailed }

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
