package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sync"

	"github.com/aos-run/aos/internal/store"
)

// RunContext is what run logic may touch. Every interaction with the world
// goes through Step (or Wait, Sleep, Now, UUID, OwnerMessages, Emit, which
// are steps too), so replay is deterministic.
//
// Errors returned by RunContext methods must be returned by the logic
// unchanged when they are the suspension signal (IsSuspend), a cancel or a
// lost lease; the worker decides what happens to the run.
type RunContext interface {
	// Context is cancelled on cancel, shutdown or a lost lease; its cause
	// is ErrCancelled, ErrShutdown or ErrLeaseLost.
	Context() context.Context
	RunID() string
	MissionID() string
	ParentRunID() string
	Input() json.RawMessage

	// Step runs exec as journaled step number next-in-call-order and
	// returns its result as JSON (recorded, or fresh).
	Step(spec StepSpec, exec ExecFunc) (json.RawMessage, error)
	// Go allocates the next step number now and runs the step
	// concurrently; Await on the future returns what Step would. Use it
	// for parallel-safe reads so their numbers follow call order.
	Go(spec StepSpec, exec ExecFunc) *Future
	// Wait durably waits for the owner. The first call suspends the run
	// (it returns the suspension signal); after resolution or expiry the
	// run is re-queued and, on replay, Wait returns the outcome.
	Wait(kind WaitKind, payload any, timeoutSec int64) (WaitOutcome, error)
	// Sleep durably suspends the run for d milliseconds.
	Sleep(ms int64) error
	// Now is a journaled clock reading (Unix milliseconds).
	Now() (int64, error)
	// UUID is a journaled random UUID.
	UUID() (string, error)
	// Emit persists an event, exactly once across replays.
	Emit(kind string, payload any) error
	// EmitTransient sends an event to live listeners; not persisted.
	EmitTransient(kind string, payload any)
	// OwnerMessages returns steering messages not yet read by this run,
	// journaled so that replay sees the same ones.
	OwnerMessages() ([]OwnerMessage, error)
	// Replaying reports whether the next step is already recorded.
	Replaying() bool
	// Usage is the run's usage so far.
	Usage() Usage
	// BudgetLeft is what remains of the run's budget.
	BudgetLeft() BudgetLeft
}

// Future is a step started by Go.
type Future struct {
	done chan struct{}
	res  json.RawMessage
	err  error
}

// Await waits for the step and returns its result.
func (f *Future) Await() (json.RawMessage, error) {
	<-f.done
	return f.res, f.err
}

type runCtx struct {
	k      *Kernel
	ctx    context.Context
	cancel context.CancelCauseFunc
	run    store.Run
	fence  store.Fence
	// release frees the worker slot the run occupies; idempotent (see
	// worker.execute).
	release func()

	recorded map[int]store.Step // journal at claim time; read-only after claim
	loaded   []store.Step       // the journal as start loaded it (takeovers)
	lastRec  int                // highest recorded seq, -1 if none

	txMu sync.Mutex // held by tx: one transaction of the run at a time

	mu           sync.Mutex // guards the fields below
	nextSeq      int
	usage        Usage
	lastOwnerMsg int64
	pending      []pendingRecord // deferred records, written by the next tx
	// live holds copies of the step events committed since the last
	// LiveAnnounce, once the run has made one (liveAnnounce).
	live     []liveCopy
	liveUsed bool
}

var _ RunContext = (*runCtx)(nil)

func (rc *runCtx) Context() context.Context { return rc.ctx }
func (rc *runCtx) RunID() string            { return rc.run.ID }
func (rc *runCtx) MissionID() string        { return rc.run.MissionID }
func (rc *runCtx) ParentRunID() string      { return rc.run.ParentRunID }
func (rc *runCtx) Input() json.RawMessage   { return rc.run.Input }

func (rc *runCtx) Replaying() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.nextSeq <= rc.lastRec
}

func (rc *runCtx) Usage() Usage {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.usage
}

func (rc *runCtx) BudgetLeft() BudgetLeft {
	rc.mu.Lock()
	u := rc.usage
	rc.mu.Unlock()
	r := rc.run
	left := BudgetLeft{USD: math.Inf(1), Turns: -1, WallSec: -1}
	if r.BudgetUSD > 0 {
		left.USD = r.BudgetUSD - u.CostUSD
		left.Fraction = max(left.Fraction, u.CostUSD/r.BudgetUSD)
	}
	if r.BudgetTurns > 0 {
		left.Turns = r.BudgetTurns - u.Turns
		left.Fraction = max(left.Fraction, float64(u.Turns)/float64(r.BudgetTurns))
	}
	if r.BudgetWallSec > 0 {
		elapsed := (rc.k.now() - r.StartedAt) / 1000
		left.WallSec = r.BudgetWallSec - elapsed
		left.Fraction = max(left.Fraction, float64(elapsed)/float64(r.BudgetWallSec))
	}
	return left
}

func (rc *runCtx) allocSeq() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	s := rc.nextSeq
	rc.nextSeq++
	return s
}

func (rc *runCtx) Step(spec StepSpec, exec ExecFunc) (json.RawMessage, error) {
	if reservedKind(spec.Kind) {
		return nil, &Error{Code: CodeInvalidInput, RunID: rc.run.ID, Seq: -1, Msg: "step kind " + spec.Kind + " is reserved for the kernel"}
	}
	return rc.step(rc.allocSeq(), spec, exec, nil)
}

func (rc *runCtx) Go(spec StepSpec, exec ExecFunc) *Future {
	f := &Future{done: make(chan struct{})}
	if reservedKind(spec.Kind) {
		f.err = &Error{Code: CodeInvalidInput, RunID: rc.run.ID, Seq: -1, Msg: "step kind " + spec.Kind + " is reserved for the kernel"}
		close(f.done)
		return f
	}
	seq := rc.allocSeq()
	go func() {
		defer close(f.done)
		f.res, f.err = rc.step(seq, spec, exec, nil)
	}()
	return f
}

// ctxErr turns the run context's cancellation into its cause.
func (rc *runCtx) ctxErr() error {
	if c := context.Cause(rc.ctx); c != nil {
		var ke *Error
		if errors.As(c, &ke) {
			return c
		}
		return &Error{Code: CodeCancelled, RunID: rc.run.ID, Seq: -1, Err: c}
	}
	return nil
}

// fenceErr maps a store fencing failure to ErrLeaseLost.
func (rc *runCtx) fenceErr(err error) error {
	if errors.Is(err, store.ErrFenced) {
		rc.cancel(newErr(CodeLeaseLost, rc.run.ID, -1, "fenced"))
		return newErr(CodeLeaseLost, rc.run.ID, -1, "another worker holds the lease")
	}
	if c := rc.ctxErr(); c != nil {
		return c
	}
	return err
}
