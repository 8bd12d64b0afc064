package kernel

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

// MaxWaitTimeoutSec bounds a wait's timeout (30 days).
const MaxWaitTimeoutSec = 30 * 24 * 3600

func (rc *runCtx) Wait(kind WaitKind, payload any, timeoutSec int64) (WaitOutcome, error) {
	if kind != WaitApproval && kind != WaitQuestion {
		return WaitOutcome{}, &Error{Code: CodeInvalidInput, RunID: rc.run.ID, Seq: -1, Msg: "wait kind must be approval or question"}
	}
	if timeoutSec < 0 || timeoutSec > MaxWaitTimeoutSec {
		return WaitOutcome{}, &Error{Code: CodeInvalidInput, RunID: rc.run.ID, Seq: -1, Msg: "wait timeout out of range"}
	}
	body, err := CanonicalJSON(payload)
	if err != nil {
		return WaitOutcome{}, &Error{Code: CodeInvalidInput, RunID: rc.run.ID, Seq: -1, Msg: "wait payload is not JSON", Err: err}
	}
	spec := StepSpec{Kind: KindWait, Name: string(kind), Effect: EffectPure,
		Request: map[string]any{"kind": kind, "payload": json.RawMessage(body), "timeoutSec": timeoutSec}}
	res, err := rc.step(rc.allocSeq(), spec, nil, func(seq int, reqJSON []byte, hash string) error {
		return rc.suspendForWait(seq, kind, json.RawMessage(body), timeoutSec, func(q store.Queries) error {
			return q.InsertStep(rc.ctx, rc.startedRow(seq, spec, reqJSON, hash, 0))
		})
	})
	if err != nil {
		return WaitOutcome{}, err
	}
	var out WaitOutcome
	if err := json.Unmarshal(res, &out); err != nil {
		return WaitOutcome{}, fmt.Errorf("kernel: decode wait outcome: %w", err)
	}
	return out, nil
}

func (rc *runCtx) Sleep(ms int64) error {
	if ms < 0 {
		return &Error{Code: CodeInvalidInput, RunID: rc.run.ID, Seq: -1, Msg: "sleep must not be negative"}
	}
	spec := StepSpec{Kind: KindTimer, Name: "sleep", Effect: EffectPure, Request: map[string]int64{"ms": ms}}
	_, err := rc.step(rc.allocSeq(), spec, nil, func(seq int, reqJSON []byte, hash string) error {
		now := rc.k.now()
		wakeAt := now + ms
		err := rc.tx(rc.ctx, func(q store.Queries) error {
			if err := rc.fenceNotCancelled(q, seq, now); err != nil {
				return err
			}
			if err := q.InsertStep(rc.ctx, rc.startedRow(seq, spec, reqJSON, hash, wakeAt)); err != nil {
				return err
			}
			if err := q.SetRunState(rc.ctx, store.SetRunStateParams{Fence: rc.fence, Status: StatusQueued, WakeAt: wakeAt, Now: now}); err != nil {
				return err
			}
			return rc.k.mirror(rc.ctx, q, rc.run, StatusQueued, nil, 0)
		})
		if err := rc.cancelledErr(err); err != nil {
			return err
		}
		if err != nil {
			return rc.fenceErr(fmt.Errorf("suspend for sleep at step %d: %w", seq, err))
		}
		rc.k.ring()
		return errSuspend
	})
	return err
}

func (rc *runCtx) startedRow(seq int, spec StepSpec, reqJSON []byte, hash string, wakeAt int64) store.Step {
	return store.Step{RunID: rc.run.ID, Seq: seq, Kind: spec.Kind, Name: spec.Name, Effect: string(spec.Effect), RequestHash: hash,
		Request: reqJSON, Status: "started", IdemKey: rc.idemKey(seq), WakeAt: wakeAt, StartedAt: rc.k.now()}
}

// suspendForWait records a wait step (or marks a step needs_reconcile via
// pre), inserts the pending wait, sets the run waiting and releases the
// lease, all in one fenced transaction; then it returns the suspension
// signal.
func (rc *runCtx) suspendForWait(seq int, kind WaitKind, payload any, timeoutSec int64, pre func(q store.Queries) error) error {
	return rc.suspendForWaitAttempt(seq, kind, payload, timeoutSec, 0, pre)
}

// suspendForWaitAttempt is suspendForWait for the question about a step's
// given attempt (reconcile questions; 0 otherwise).
func (rc *runCtx) suspendForWaitAttempt(seq int, kind WaitKind, payload any, timeoutSec int64, attempt int, pre func(q store.Queries) error) error {
	body, err := CanonicalJSON(payload)
	if err != nil {
		return &Error{Code: CodeInvalidInput, RunID: rc.run.ID, Seq: seq, Msg: "wait payload is not JSON", Err: err}
	}
	now := rc.k.now()
	var resolveBy int64
	if timeoutSec > 0 {
		resolveBy = now + timeoutSec*1000
	}
	w := store.Wait{ID: newID(), RunID: rc.run.ID, MissionID: rc.run.MissionID, StepSeq: seq, Kind: string(kind), Payload: body,
		Status: "pending", ResolveBy: resolveBy, CreatedAt: now, Attempt: attempt}
	err = rc.tx(rc.ctx, func(q store.Queries) error {
		if err := rc.fenceNotCancelled(q, seq, now); err != nil {
			return err
		}
		if err := pre(q); err != nil {
			return err
		}
		if err := q.InsertWait(rc.ctx, w); err != nil {
			return err
		}
		if err := q.SetRunState(rc.ctx, store.SetRunStateParams{Fence: rc.fence, Status: StatusWaiting, Now: now}); err != nil {
			return err
		}
		if err := rc.k.mirror(rc.ctx, q, rc.run, StatusWaiting, nil, 0); err != nil {
			return err
		}
		return rc.k.event(rc.ctx, q, rc.run.MissionID, rc.run.ID, &seq, "wait.created",
			map[string]any{"waitId": w.ID, "kind": kind, "payload": json.RawMessage(body), "resolveBy": resolveBy})
	})
	if err := rc.cancelledErr(err); err != nil {
		return err
	}
	if err != nil {
		return rc.fenceErr(fmt.Errorf("suspend for wait at step %d: %w", seq, err))
	}
	rc.k.ring()
	return errSuspend
}

// suspendAgain re-suspends a run whose wait or timer is not due yet.
func (rc *runCtx) suspendAgain(seq int, status string, wakeAt int64) error {
	now := rc.k.now()
	err := rc.tx(rc.ctx, func(q store.Queries) error {
		if err := q.SetRunState(rc.ctx, store.SetRunStateParams{Fence: rc.fence, Status: status, WakeAt: wakeAt, Now: now}); err != nil {
			return err
		}
		return rc.k.mirror(rc.ctx, q, rc.run, status, nil, 0)
	})
	if err != nil {
		return rc.fenceErr(fmt.Errorf("re-suspend at step %d: %w", seq, err))
	}
	return errSuspend
}

// resumeWait handles a wait step found started: the wait was created.
func (rc *runCtx) resumeWait(seq int, rec store.Step) (json.RawMessage, error) {
	w, err := rc.k.st.GetWaitByStep(rc.ctx, rc.run.ID, seq)
	if errors.Is(err, store.ErrNotFound) {
		// Intent without a wait cannot happen (one transaction), but a
		// journal edited by hand could: create the wait now.
		var req struct {
			Kind       WaitKind        `json:"kind"`
			Payload    json.RawMessage `json:"payload"`
			TimeoutSec int64           `json:"timeoutSec"`
		}
		if err := json.Unmarshal(rec.Request, &req); err != nil {
			return nil, fmt.Errorf("kernel: decode wait request of step %d: %w", seq, err)
		}
		return nil, rc.suspendForWait(seq, req.Kind, req.Payload, req.TimeoutSec, func(store.Queries) error { return nil })
	}
	if err != nil {
		return nil, fmt.Errorf("kernel: wait of step %d: %w", seq, err)
	}
	switch w.Status {
	case "pending":
		return nil, rc.suspendAgain(seq, StatusWaiting, 0)
	case "cancelled":
		rc.cancel(newErr(CodeCancelled, rc.run.ID, -1, "wait cancelled"))
		return nil, newErr(CodeCancelled, rc.run.ID, seq, "wait cancelled")
	}
	out := WaitOutcome{Status: w.Status, Resolution: w.Resolution, Actor: w.Actor}
	res, err := CanonicalJSON(out)
	if err != nil {
		return nil, fmt.Errorf("kernel: encode wait outcome: %w", err)
	}
	spec := StepSpec{Kind: rec.Kind, Name: rec.Name, Effect: EffectPure}
	return rc.finish(seq, spec, res, nil, Usage{}, nil)
}

// resumeTimer handles a timer step found started.
func (rc *runCtx) resumeTimer(seq int, rec store.Step) (json.RawMessage, error) {
	if rc.k.now() < rec.WakeAt {
		return nil, rc.suspendAgain(seq, StatusQueued, rec.WakeAt)
	}
	spec := StepSpec{Kind: rec.Kind, Name: rec.Name, Effect: EffectPure}
	return rc.finish(seq, spec, json.RawMessage(`{"woke":true}`), nil, Usage{}, nil)
}

// fenceNotCancelled is the fencing check of a transaction after which the
// run would go on or suspend (an intent, a wait, a sleep, the commit before
// a LiveAnnounce step): a cancel requested while the run was running must
// end it here, not let an effect start or leave the run suspended with the
// request unseen (its requester found it running, so only the run itself
// can end it).
func (rc *runCtx) fenceNotCancelled(q store.Queries, seq int, now int64) error {
	cancel, err := q.FenceRun(rc.ctx, rc.fence, now, 0)
	if err != nil {
		return err
	}
	if cancel {
		return newErr(CodeCancelled, rc.run.ID, seq, "cancel requested")
	}
	return nil
}

// cancelledErr ends the run cancelled when a transaction found its cancel
// requested (fenceNotCancelled, intent) and returns that error; any other
// error, or none, is nil.
func (rc *runCtx) cancelledErr(err error) error {
	if !errors.Is(err, ErrCancelled) {
		return nil
	}
	rc.cancel(newErr(CodeCancelled, rc.run.ID, -1, "cancel requested"))
	return err
}
