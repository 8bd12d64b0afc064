package kernel

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// resume handles a step found started: its execution was interrupted.
// A step with a probe is probed first, whatever its effect; without an
// answer from the probe, steps that are harmless to repeat execute again
// and non_idempotent ones are asked of the owner.
func (rc *runCtx) resume(seq int, spec StepSpec, rec store.Step, exec ExecFunc) (json.RawMessage, error) {
	switch spec.Kind {
	case KindWait:
		return rc.resumeWait(seq, rec)
	case KindTimer:
		return rc.resumeTimer(seq, rec)
	}
	probeNote := ""
	if spec.Reconcile != nil {
		out, err := spec.Reconcile(rc.ctx, rec.Request, rec.IdemKey)
		if c := rc.ctxErr(); c != nil {
			return nil, c
		}
		if err == nil {
			switch out.Answer {
			case ReconcileDone:
				res, err := CanonicalJSON(out.Result)
				if err != nil {
					return nil, fmt.Errorf("kernel: reconcile result of step %d: %w", seq, err)
				}
				return rc.finish(seq, spec, res, nil, Usage{}, nil)
			case ReconcileNotDone:
				return rc.execute(seq, spec, rec.Request, exec, nil)
			}
			probeNote = "Its probe could not tell whether it took effect."
			if out.Note != "" {
				probeNote = out.Note
			}
		} else {
			probeNote = "Its probe failed: " + err.Error()
		}
	}
	if spec.Effect != EffectNonIdempotent {
		if spec.Effect == EffectModelCall {
			if err := rc.checkBudget(); err != nil {
				return nil, err
			}
		}
		return rc.execute(seq, spec, rec.Request, exec, nil)
	}
	if spec.Reconcile != nil {
		rc.k.opts.Logger.Warn("reconcile probe could not tell; asking the owner", "mission", rc.run.MissionID, "run", rc.run.ID, "seq", seq)
	} else {
		probeNote = "aos has no way to check this step's effect."
	}
	return nil, rc.askReconcile(seq, spec, rec, probeNote)
}

// Consequences of each reconcile answer, as a question shows them.
const (
	consequenceRan   = "aos records that it ran and goes on without running it again; the agent is told it ran and that its output was not captured."
	consequenceRerun = "aos runs it once more now (if it did run, its effect happens twice); if aos stops again during that run, you are asked again."
	consequenceAbort = "the step fails and the run ends failed; nothing is run again."
)

// ReconcileChoice is one answer a reconcile question offers, with what
// choosing it does.
type ReconcileChoice struct {
	Answer      string `json:"answer"`
	Consequence string `json:"consequence"`
}

// askReconcile marks the step needs_reconcile, opens a question about its
// current attempt and suspends the run. The question says which step, its
// exact input, what aos knows about whether it ran, and what each answer
// does.
func (rc *runCtx) askReconcile(seq int, spec StepSpec, rec store.Step, probeNote string) error {
	what := fmt.Sprintf("%s %s", spec.Kind, spec.Name)
	if spec.Subject != nil && spec.Subject.Summary != "" {
		what = spec.Subject.Summary
	}
	started := time.UnixMilli(rec.StartedAt).UTC().Format(time.RFC3339)
	known := fmt.Sprintf("Its start was recorded at %s and no result was: aos stopped (a crash, a kill or a lost lease) while it ran, so it may have run fully, partly or not at all.", started)
	if rec.Attempt > 0 {
		known = fmt.Sprintf("An owner answered %q to an earlier question about it; aos started that re-run (attempt %d) at %s and stopped again before recording its result, so the re-run may have run fully, partly or not at all.",
			ReconcileRerun, rec.Attempt, started)
	}
	choices := []ReconcileChoice{{ReconcileRan, consequenceRan}, {ReconcileRerun, consequenceRerun}, {ReconcileAbort, consequenceAbort}}
	text := fmt.Sprintf("aos stopped while running step %d: %s\n%s\n%s\nDid it take effect?", seq, what, known, probeNote)
	for _, c := range choices {
		text += fmt.Sprintf("\n  • %s: %s", c.Answer, c.Consequence)
	}
	payload := map[string]any{
		"text":      text,
		"options":   ReconcileOptions(),
		"answers":   choices,
		"reconcile": true,
		"stepSeq":   seq,
		"stepKind":  spec.Kind,
		"stepName":  spec.Name,
		"attempt":   rec.Attempt,
		"known":     known,
		"probe":     probeNote,
		"startedAt": rec.StartedAt,
	}
	if spec.Subject != nil {
		payload["tool"], payload["summary"] = spec.Subject.Tool, spec.Subject.Summary
		if len(spec.Subject.Input) > 0 {
			payload["input"] = spec.Subject.Input
		}
	}
	return rc.suspendForWaitAttempt(seq, WaitQuestion, payload, 0, rec.Attempt, func(q store.Queries) error {
		return q.MarkStepNeedsReconcile(rc.ctx, rc.run.ID, seq)
	})
}

// afterReconcile acts on the owner's answer to the question about the
// step's current attempt. "Run it" authorizes exactly one attempt: the
// answer is consumed durably (the step goes back to started at the next
// attempt, in one fenced transaction) before exec runs, so a crash during
// that attempt finds a started step and asks again, with a new question.
func (rc *runCtx) afterReconcile(seq int, spec StepSpec, rec store.Step, exec ExecFunc) (json.RawMessage, error) {
	w, err := rc.k.st.GetWaitByStep(rc.ctx, rc.run.ID, seq)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("kernel: reconcile wait of step %d: %w", seq, err)
	}
	if err != nil || w.Attempt != rec.Attempt {
		// No question about this attempt (a journal edited by hand): ask.
		return nil, rc.askReconcile(seq, spec, rec, "")
	}
	switch w.Status {
	case "pending":
		return nil, rc.suspendAgain(seq, StatusWaiting, 0)
	case "cancelled":
		rc.cancel(newErr(CodeCancelled, rc.run.ID, -1, "wait cancelled"))
		return nil, newErr(CodeCancelled, rc.run.ID, seq, "wait cancelled")
	}
	switch answerOf(w.Resolution) {
	case ReconcileRan:
		res, err := CanonicalJSON(spec.AssumedResult)
		if err != nil {
			return nil, fmt.Errorf("kernel: assumed result of step %d: %w", seq, err)
		}
		return rc.finish(seq, spec, res, nil, Usage{}, nil)
	case ReconcileRerun:
		rc.hook(func(h *Hooks) func(string, int) { return h.BeforeIntent }, seq)
		if err := rc.retry(seq, spec, rec); err != nil {
			return nil, err
		}
		rc.hook(func(h *Hooks) func(string, int) { return h.AfterIntent }, seq)
		return rc.execute(seq, spec, rec.Request, exec, nil)
	default: // abort, an unknown answer, or expiry: never guess
		msg := "aborted by the owner: step may or may not have run"
		if w.Status == "expired" {
			msg = "reconcile question expired: step may or may not have run"
		}
		_, err := rc.finish(seq, spec, nil, &Error{Code: CodeReconcileAbort, RunID: rc.run.ID, Seq: seq, Msg: msg}, Usage{}, nil)
		return nil, err
	}
}

// retry consumes the owner's "run it": in one fenced transaction the step
// becomes started at its next attempt (a new intent) and step.started is
// emitted with the attempt.
func (rc *runCtx) retry(seq int, spec StepSpec, rec store.Step) error {
	now := rc.k.now()
	attempt := rec.Attempt + 1
	err := rc.tx(rc.ctx, func(q store.Queries) error {
		cancel, err := q.FenceRun(rc.ctx, rc.fence, now, 0)
		if err != nil {
			return err
		}
		if cancel {
			return newErr(CodeCancelled, rc.run.ID, seq, "cancel requested")
		}
		if err := q.RetryStep(rc.ctx, store.RetryStepParams{RunID: rc.run.ID, Seq: seq, Attempt: rec.Attempt, Now: now}); err != nil {
			return err
		}
		s := store.Step{Seq: seq, Kind: spec.Kind, Name: spec.Name, Effect: string(spec.Effect)}
		p := stepEventPayload(s, "request", rec.Request)
		p["attempt"] = attempt
		return rc.k.event(rc.ctx, q, rc.run.MissionID, rc.run.ID, &seq, "step.started", p)
	})
	if errors.Is(err, ErrCancelled) {
		rc.cancel(newErr(CodeCancelled, rc.run.ID, -1, "cancel requested"))
		return err
	}
	if err != nil {
		return rc.fenceErr(fmt.Errorf("start attempt %d of step %d: %w", attempt, seq, err))
	}
	rc.k.ring()
	return nil
}
