package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/store"
)

// Step kinds the kernel itself journals.
const (
	KindWait          = "wait"
	KindTimer         = "timer"
	KindNow           = "now"
	KindUUID          = "uuid"
	KindEmit          = "emit"
	KindOwnerMessages = "owner_messages"
)

// Reconcile question options (seed §2 point 4).
const (
	ReconcileRan    = "it ran — continue"
	ReconcileRerun  = "it did not run — run it"
	ReconcileAbort  = "abort"
	maxEventBodyLen = 16 << 10
)

// ReconcileOptions are the answers a reconcile question offers.
func ReconcileOptions() []string { return []string{ReconcileRan, ReconcileRerun, ReconcileAbort} }

func (rc *runCtx) idemKey(seq int) string { return fmt.Sprintf("%s/%d", rc.run.ID, seq) }

func (rc *runCtx) hook(h func(*Hooks) func(string, int), seq int) {
	if rc.k.opts.Hooks == nil {
		return
	}
	if f := h(rc.k.opts.Hooks); f != nil {
		f(rc.run.ID, seq)
	}
}

// reservedKinds are journaled by the kernel itself; Step refuses them.
func reservedKind(kind string) bool {
	switch kind {
	case KindWait, KindTimer, KindNow, KindUUID, KindEmit, KindOwnerMessages:
		return true
	}
	return false
}

// step is the step protocol of seed §2. fresh, when set, replaces intent +
// exec for a step with no record (waits and timers, which suspend).
func (rc *runCtx) step(seq int, spec StepSpec, exec ExecFunc, fresh func(seq int, reqJSON []byte, hash string) error) (json.RawMessage, error) {
	if !spec.Effect.valid() || spec.Kind == "" || spec.Name == "" {
		return nil, &Error{Code: CodeInvalidInput, RunID: rc.run.ID, Seq: seq, Msg: fmt.Sprintf("step needs a kind, a name and a valid effect (got %q/%q/%q)", spec.Kind, spec.Name, spec.Effect)}
	}
	reqJSON, hash, err := HashRequest(spec.Request)
	if err != nil {
		return nil, &Error{Code: CodeInvalidInput, RunID: rc.run.ID, Seq: seq, Msg: "request cannot be hashed", Err: err}
	}
	if err := rc.ctxErr(); err != nil {
		return nil, err
	}
	if rec, ok := rc.recorded[seq]; ok {
		if rec.Kind != spec.Kind || rec.Name != spec.Name || rec.RequestHash != hash {
			return nil, &NonDeterminismError{RunID: rc.run.ID, Seq: seq, RecordedKind: rec.Kind, Kind: spec.Kind,
				RecordedName: rec.Name, Name: spec.Name, RecordedHash: rec.RequestHash, Hash: hash}
		}
		switch rec.Status {
		case "completed":
			rc.addUsage(rec)
			return rec.Result, nil
		case "failed":
			return nil, stepErrorFrom(rc.run.ID, rec)
		case "started":
			return rc.resume(seq, spec, rec, exec)
		case "needs_reconcile":
			return rc.afterReconcile(seq, spec, rec, exec)
		}
		return nil, fmt.Errorf("kernel: step %d has unknown status %q", seq, rec.Status)
	}
	if fresh != nil {
		return nil, fresh(seq, reqJSON, hash)
	}
	if spec.Effect == EffectModelCall {
		if err := rc.checkBudget(); err != nil {
			return nil, err
		}
	}
	rc.hook(func(h *Hooks) func(string, int) { return h.BeforeIntent }, seq)
	if !spec.needsIntent() {
		// No intent row: re-executing this step after a crash is harmless
		// (pure, read, model_call, idempotent_write), so only its result
		// is written, in one transaction.
		rc.hook(func(h *Hooks) func(string, int) { return h.AfterIntent }, seq)
		if spec.LiveAnnounce {
			if err := rc.liveAnnounceStep(seq, rc.liveEvent(seq, "step.started", rc.startedRow(seq, spec, reqJSON, hash, 0), "request", reqJSON)); err != nil {
				if errors.Is(err, ErrCancelled) {
					return nil, err
				}
				return nil, rc.fenceErr(fmt.Errorf("record the steps before step %d: %w", seq, err))
			}
		}
		return rc.execute(seq, spec, reqJSON, exec, &store.Step{RequestHash: hash, Request: reqJSON})
	}
	if err := rc.intent(seq, spec, reqJSON, hash); err != nil {
		return nil, err
	}
	rc.hook(func(h *Hooks) func(string, int) { return h.AfterIntent }, seq)
	return rc.execute(seq, spec, reqJSON, exec, nil)
}

func stepErrorFrom(runID string, rec store.Step) error {
	var e struct {
		Message string `json:"message"`
		Code    string `json:"code"`
	}
	_ = json.Unmarshal(rec.Error, &e)
	if e.Code == string(CodeReconcileAbort) {
		return &Error{Code: CodeReconcileAbort, RunID: runID, Seq: rec.Seq, Msg: e.Message}
	}
	return &StepError{RunID: runID, Seq: rec.Seq, Name: rec.Name, Message: e.Message}
}

func (rc *runCtx) addUsage(rec store.Step) {
	if len(rec.Usage) == 0 {
		return
	}
	var u Usage
	if json.Unmarshal(rec.Usage, &u) == nil {
		rc.mu.Lock()
		rc.usage = rc.usage.add(u)
		rc.mu.Unlock()
	}
}

// intent records that the step is about to execute.
func (rc *runCtx) intent(seq int, spec StepSpec, reqJSON []byte, hash string) error {
	now := rc.k.now()
	s := rc.startedRow(seq, spec, reqJSON, hash, 0)
	// The started row rides with the pending records' rows (txRows).
	err := rc.txRows(rc.ctx, []store.Step{s}, func(q store.Queries) error {
		if err := rc.fenceNotCancelled(q, seq, now); err != nil {
			return err
		}
		return rc.k.stepEvent(rc.ctx, q, rc.run.MissionID, rc.run.ID, seq, "step.started", s, "request", reqJSON)
	})
	if err := rc.cancelledErr(err); err != nil {
		return err
	}
	if err != nil {
		return rc.fenceErr(fmt.Errorf("record intent of step %d: %w", seq, err))
	}
	rc.k.ring()
	rc.committedLive(liveCopy{seq, rc.liveEvent(seq, "step.started", s, "request", reqJSON)})
	return nil
}

func stepEventPayload(s store.Step, bodyKey string, body []byte) map[string]any {
	p := map[string]any{"seq": s.Seq, "kind": s.Kind, "name": s.Name, "effect": s.Effect}
	if len(body) <= maxEventBodyLen {
		p[bodyKey] = json.RawMessage(body)
	} else {
		p["truncated"] = true
	}
	return p
}

// stepEvent is a step event's payload, its fields in the order canonical
// JSON sorts its keys.
type stepEvent struct {
	Effect    string          `json:"effect"`
	Error     json.RawMessage `json:"error,omitempty"`
	Kind      string          `json:"kind"`
	Name      string          `json:"name"`
	Request   json.RawMessage `json:"request,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Seq       int             `json:"seq"`
	Truncated bool            `json:"truncated,omitempty"`
}

// stepEventJSON is CanonicalJSON(stepEventPayload(s, bodyKey, body)) for a
// body that is canonical JSON already (a request, result or error as the
// kernel records them), built in one pass: the body is copied, not decoded
// and encoded again.
func stepEventJSON(s store.Step, bodyKey string, body []byte) ([]byte, error) {
	e := stepEvent{Effect: s.Effect, Kind: s.Kind, Name: s.Name, Seq: s.Seq}
	switch {
	case !utf8.ValidString(s.Effect) || !utf8.ValidString(s.Kind) || !utf8.ValidString(s.Name):
		// Canonical JSON writes U+FFFD for invalid bytes as the character;
		// one pass would write its escape.
		return CanonicalJSON(stepEventPayload(s, bodyKey, body))
	case len(body) > maxEventBodyLen:
		e.Truncated = true
	case len(body) == 0:
		return CanonicalJSON(stepEventPayload(s, bodyKey, body)) // null
	case bodyKey == "request":
		e.Request = body
	case bodyKey == "result":
		e.Result = body
	case bodyKey == "error":
		e.Error = body
	default:
		return CanonicalJSON(stepEventPayload(s, bodyKey, body))
	}
	return marshal(e)
}

// execute runs exec and records its outcome. fresh, when set, means no
// intent row exists: the outcome is inserted instead of updating it.
func (rc *runCtx) execute(seq int, spec StepSpec, reqJSON []byte, exec ExecFunc, fresh *store.Step) (json.RawMessage, error) {
	if h := rc.k.opts.Hooks; h != nil && h.BeforeExec != nil {
		h.BeforeExec(rc.run.ID, seq, spec.Kind, spec.Name)
	}
	out, execErr := exec(rc.ctx, rc.idemKey(seq))
	if c := rc.ctxErr(); c != nil {
		// Interrupted by cancel, shutdown or a lost lease: the step stays
		// started, with no result, and is resumed or reconciled later.
		return nil, c
	}
	rc.hook(func(h *Hooks) func(string, int) { return h.AfterExec }, seq)
	if execErr != nil {
		_, err := rc.finish(seq, spec, nil, execErr, Usage{}, fresh)
		return nil, err
	}
	res, err := CanonicalJSON(out.Result)
	if err != nil {
		_, err := rc.finish(seq, spec, nil, fmt.Errorf("result is not JSON: %w", err), Usage{}, fresh)
		return nil, err
	}
	u := out.Usage
	if spec.Effect == EffectModelCall {
		u.Turns = 1
	}
	return rc.finish(seq, spec, res, nil, u, fresh)
}

// finish records a step's result (or failure) with its usage and spend, in
// one fenced transaction, and returns the result as journaled. It is written
// idempotently: if the commit's acknowledgement was lost and the retry finds
// the step already recorded, the recorded row is read back and wins. fresh
// (no intent row) inserts the row instead of finishing it.
func (rc *runCtx) finish(seq int, spec StepSpec, result json.RawMessage, execErr error, u Usage, fresh *store.Step) (json.RawMessage, error) {
	now := rc.k.now()
	p := store.FinishStepParams{RunID: rc.run.ID, Seq: seq, Status: "completed", Result: result, CostUSD: u.CostUSD, Now: now}
	if execErr != nil {
		p.Status = "failed"
		p.Error, _ = CanonicalJSON(map[string]string{"message": execErr.Error()})
		var ke *Error
		if errors.As(execErr, &ke) && ke.Code == CodeReconcileAbort {
			p.Error, _ = CanonicalJSON(map[string]string{"message": ke.Msg, "code": string(CodeReconcileAbort)})
		}
	}
	if !u.isZero() {
		p.Usage, _ = CanonicalJSON(u)
	}
	rc.mu.Lock()
	total := rc.usage.add(u)
	rc.mu.Unlock()
	totalJSON, _ := CanonicalJSON(total)
	day := time.UnixMilli(now).UTC().Format(time.DateOnly)
	// The step event the record persists (and its live copy carries).
	s := store.Step{Seq: seq, Kind: spec.Kind, Name: spec.Name, Effect: string(spec.Effect)}
	evKind, bodyKey, body := "step.completed", "result", []byte(result)
	if execErr != nil {
		evKind, bodyKey, body = "step.failed", "error", p.Error
	}
	write := func(ctx context.Context, q store.Queries) error {
		if fresh != nil {
			row := store.Step{RunID: rc.run.ID, Seq: seq, Kind: spec.Kind, Name: spec.Name, Effect: string(spec.Effect), RequestHash: fresh.RequestHash,
				Request: fresh.Request, Status: p.Status, IdemKey: rc.idemKey(seq), Result: p.Result, Error: p.Error, Usage: p.Usage,
				CostUSD: p.CostUSD, StartedAt: now, EndedAt: now}
			if err := q.InsertStep(ctx, row); err != nil {
				return err
			}
		} else if err := q.FinishStep(ctx, p); err != nil {
			return err
		}
		if !u.isZero() {
			if err := q.AddRunUsage(ctx, store.AddUsageParams{RunID: rc.run.ID, Usage: totalJSON, USD: u.CostUSD, Turns: u.Turns, NextSeq: seq + 1, Now: now}); err != nil {
				return err
			}
			if u.CostUSD != 0 {
				if err := q.AddMissionSpend(ctx, rc.run.MissionID, u.CostUSD, now); err != nil {
					return err
				}
				if err := q.AddSpend(ctx, day, u.CostUSD); err != nil {
					return err
				}
			}
		}
		if err := rc.k.stepEvent(ctx, q, rc.run.MissionID, rc.run.ID, seq, evKind, s, bodyKey, body); err != nil || execErr != nil {
			return err // a failure records no usage event
		}
		if u.isZero() {
			return nil
		}
		return rc.k.event(ctx, q, rc.run.MissionID, rc.run.ID, &seq, "run.usage", map[string]any{"usage": total, "budget": rc.budget()})
	}
	// Its step event's live copy (a run.usage event, which a deferred
	// model call's result also persists, has none: its seq is not in
	// its payload, so a watcher could not tell its copy from it).
	live := func() []liveCopy { return []liveCopy{{seq, rc.liveEvent(seq, evKind, s, bodyKey, body)}} }
	var reconcileAbort *Error
	if deferrable(spec) && !(errors.As(execErr, &reconcileAbort) && reconcileAbort.Code == CodeReconcileAbort) {
		// The next transaction of the run writes it (pending.go). A record
		// whose live copy would go without its body commits before the
		// next LiveAnnounce step too: watchers show its persisted event
		// instead, which must not wait for a transaction a turn later.
		commitFirst := spec.Effect == EffectModelCall || spec.Kind == KindWait || spec.Kind == KindTimer || !liveFits(body)
		if err := rc.deferRecord(pendingRecord{seq: seq, status: p.Status, usd: u.CostUSD, write: write, live: live, commitFirst: commitFirst}); err != nil {
			return nil, rc.fenceErr(fmt.Errorf("record result of step %d: %w", seq, err))
		}
		rc.mu.Lock()
		rc.usage = total
		rc.mu.Unlock()
		rc.hook(func(h *Hooks) func(string, int) { return h.AfterCommit }, seq)
		rc.afterRecord(seq, spec.Kind, spec.Name)
		if execErr != nil {
			return nil, &StepError{RunID: rc.run.ID, Seq: seq, Name: spec.Name, Message: execErr.Error()}
		}
		return result, nil
	}
	var cancel bool
	err := rc.tx(rc.ctx, func(q store.Queries) error {
		var err error
		if cancel, err = q.FenceRun(rc.ctx, rc.fence, now, 0); err != nil {
			return err
		}
		return write(rc.ctx, q)
	})
	if errors.Is(err, store.ErrConflict) {
		// Already recorded: a retried commit whose first attempt landed.
		// The journal wins.
		rec, gerr := rc.k.st.GetStep(rc.ctx, rc.run.ID, seq)
		if gerr != nil {
			return nil, fmt.Errorf("read back step %d: %w", seq, gerr)
		}
		switch rec.Status {
		case "failed":
			return nil, stepErrorFrom(rc.run.ID, rec)
		case "completed":
			result, err, execErr = rec.Result, nil, nil
		default:
			return nil, fmt.Errorf("kernel: step %d is %s after its result was written", seq, rec.Status)
		}
	}
	if err != nil {
		return nil, rc.fenceErr(fmt.Errorf("record result of step %d: %w", seq, err))
	}
	rc.mu.Lock()
	rc.usage = total
	rc.mu.Unlock()
	rc.k.ring()
	if err == nil {
		rc.committedLive(live()...)
	}
	rc.hook(func(h *Hooks) func(string, int) { return h.AfterCommit }, seq)
	rc.afterRecord(seq, spec.Kind, spec.Name)
	if cancel {
		rc.cancel(newErr(CodeCancelled, rc.run.ID, -1, "cancel requested"))
		return nil, newErr(CodeCancelled, rc.run.ID, seq, "cancel requested")
	}
	if execErr != nil {
		var ke *Error
		if errors.As(execErr, &ke) && ke.Code == CodeReconcileAbort {
			return nil, ke
		}
		return nil, &StepError{RunID: rc.run.ID, Seq: seq, Name: spec.Name, Message: execErr.Error()}
	}
	return result, nil
}

// maxLiveBodyLen bounds the body (request, result or error) a live copy
// carries: larger ones would not fit a cross-process payload (PostgreSQL's
// NOTIFY takes 8,000 bytes), where the copy would be dropped, and the order
// it exists for lost. A copy without its body has "truncated": true;
// watchers do not show it and wait for the persisted event, which a
// deferred record commits before the next LiveAnnounce step for that
// reason (its pendingRecord.commitFirst).
const maxLiveBodyLen = 4 << 10

// liveFits reports whether a live copy carries body.
func liveFits(body []byte) bool { return len(body) <= maxLiveBodyLen }

// liveEvent is the transient copy of a step event (see liveAnnounce): the
// payload the persisted event carries (stepEventJSON), its body left out
// beyond maxLiveBodyLen.
func (rc *runCtx) liveEvent(seq int, kind string, s store.Step, bodyKey string, body []byte) TransientEvent {
	var b []byte
	if liveFits(body) {
		b, _ = stepEventJSON(s, bodyKey, body)
	}
	if b == nil { // too large, or not encodable: a copy without its body
		b, _ = CanonicalJSON(map[string]any{"seq": seq, "kind": s.Kind, "name": s.Name, "effect": s.Effect, "truncated": true})
	}
	return TransientEvent{MissionID: rc.run.MissionID, RunID: rc.run.ID, Kind: kind, Payload: json.RawMessage(b)}
}

func (rc *runCtx) budget() Budget {
	return Budget{USD: rc.run.BudgetUSD, Turns: rc.run.BudgetTurns, WallSec: rc.run.BudgetWallSec}
}

// checkBudget hard-stops a new model call when a run budget or the daily
// cap is used up.
func (rc *runCtx) checkBudget() error {
	rc.mu.Lock()
	u := rc.usage
	rc.mu.Unlock()
	r := rc.run
	switch {
	case r.BudgetUSD > 0 && u.CostUSD >= r.BudgetUSD:
		return &BudgetExhaustedError{RunID: r.ID, Scope: "usd", Limit: r.BudgetUSD, Used: u.CostUSD}
	case r.BudgetTurns > 0 && u.Turns >= r.BudgetTurns:
		return &BudgetExhaustedError{RunID: r.ID, Scope: "turns", Limit: float64(r.BudgetTurns), Used: float64(u.Turns)}
	case r.BudgetWallSec > 0 && (rc.k.now()-r.StartedAt)/1000 >= r.BudgetWallSec:
		return &BudgetExhaustedError{RunID: r.ID, Scope: "wall", Limit: float64(r.BudgetWallSec), Used: float64((rc.k.now() - r.StartedAt) / 1000)}
	}
	limit, err := rc.k.DailyCap(rc.ctx)
	if err != nil {
		return err
	}
	if limit > 0 {
		spent, err := rc.k.SpentToday(rc.ctx)
		if err != nil {
			return err
		}
		spent += rc.pendingUSD()
		if spent >= limit {
			return &BudgetExhaustedError{RunID: r.ID, Scope: "daily", Limit: limit, Used: spent}
		}
	}
	return nil
}

// answerOf reads a question's answer: a JSON string, or {"answer": "…"}.
func answerOf(res json.RawMessage) string {
	var s string
	if json.Unmarshal(res, &s) == nil {
		return s
	}
	var o struct {
		Answer string `json:"answer"`
	}
	_ = json.Unmarshal(res, &o)
	return o.Answer
}

// instant records an internal step (now, uuid, emit, owner_messages) in one
// transaction with no intent row: re-executing such a step is harmless, and
// its result is what makes replay stable.
func (rc *runCtx) instant(kind, name string, request any, exec func(ctx context.Context) (any, error), extra func(ctx context.Context, q store.Queries, seq int) error) (json.RawMessage, error) {
	seq := rc.allocSeq()
	reqJSON, hash, err := HashRequest(request)
	if err != nil {
		return nil, &Error{Code: CodeInvalidInput, RunID: rc.run.ID, Seq: seq, Msg: "request cannot be hashed", Err: err}
	}
	if err := rc.ctxErr(); err != nil {
		return nil, err
	}
	if rec, ok := rc.recorded[seq]; ok {
		if rec.Kind != kind || rec.Name != name || rec.RequestHash != hash {
			return nil, &NonDeterminismError{RunID: rc.run.ID, Seq: seq, RecordedKind: rec.Kind, Kind: kind, RecordedName: rec.Name, Name: name, RecordedHash: rec.RequestHash, Hash: hash}
		}
		return rec.Result, nil
	}
	v, err := exec(rc.ctx)
	if err != nil {
		return nil, fmt.Errorf("kernel: %s step %d: %w", kind, seq, err)
	}
	res, err := CanonicalJSON(v)
	if err != nil {
		return nil, fmt.Errorf("kernel: %s step %d: %w", kind, seq, err)
	}
	now := rc.k.now()
	// Written by the run's next transaction (pending.go).
	err = rc.deferRecord(pendingRecord{seq: seq, status: "completed", write: func(ctx context.Context, q store.Queries) error {
		if err := q.InsertStep(ctx, store.Step{RunID: rc.run.ID, Seq: seq, Kind: kind, Name: name, Effect: string(EffectPure), RequestHash: hash,
			Request: reqJSON, Status: "completed", IdemKey: rc.idemKey(seq), Result: res, StartedAt: now, EndedAt: now}); err != nil {
			return err
		}
		if extra != nil {
			return extra(ctx, q, seq)
		}
		return nil
	}})
	if err != nil {
		return nil, rc.fenceErr(fmt.Errorf("record %s step %d: %w", kind, seq, err))
	}
	rc.afterRecord(seq, kind, name)
	return res, nil
}

func (rc *runCtx) Now() (int64, error) {
	res, err := rc.instant(KindNow, "now", nil, func(context.Context) (any, error) { return map[string]int64{"ms": rc.k.now()}, nil }, nil)
	if err != nil {
		return 0, err
	}
	var v struct {
		MS int64 `json:"ms"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		return 0, fmt.Errorf("kernel: decode now: %w", err)
	}
	return v.MS, nil
}

func (rc *runCtx) UUID() (string, error) {
	res, err := rc.instant(KindUUID, "uuid", nil, func(context.Context) (any, error) { return map[string]string{"uuid": newID()}, nil }, nil)
	if err != nil {
		return "", err
	}
	var v struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		return "", fmt.Errorf("kernel: decode uuid: %w", err)
	}
	return v.UUID, nil
}

func (rc *runCtx) Emit(kind string, payload any) error {
	body, err := CanonicalJSON(payload)
	if err != nil {
		return &Error{Code: CodeInvalidInput, RunID: rc.run.ID, Seq: -1, Msg: "event payload is not JSON", Err: err}
	}
	_, err = rc.instant(KindEmit, kind, json.RawMessage(body), func(context.Context) (any, error) { return nil, nil }, func(ctx context.Context, q store.Queries, seq int) error {
		_, err := q.InsertEvent(ctx, store.Event{MissionID: rc.run.MissionID, RunID: rc.run.ID, Kind: kind, Payload: body, CreatedAt: rc.k.now()})
		return err
	})
	return err
}

func (rc *runCtx) EmitTransient(kind string, payload any) {
	rc.k.emitTransient(TransientEvent{MissionID: rc.run.MissionID, RunID: rc.run.ID, Kind: kind, Payload: payload})
}

func (rc *runCtx) OwnerMessages() ([]OwnerMessage, error) {
	rc.mu.Lock()
	after := rc.lastOwnerMsg
	rc.mu.Unlock()
	res, err := rc.instant(KindOwnerMessages, "owner_messages", map[string]int64{"afterId": after}, func(ctx context.Context) (any, error) {
		ms, err := rc.k.st.ListOwnerMessages(ctx, rc.run.ID, after)
		if err != nil {
			return nil, err
		}
		out := make([]OwnerMessage, 0, len(ms))
		for _, m := range ms {
			out = append(out, OwnerMessage{ID: m.ID, Text: m.Text})
		}
		return map[string]any{"messages": out}, nil
	}, nil)
	if err != nil {
		return nil, err
	}
	var v struct {
		Messages []OwnerMessage `json:"messages"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		return nil, fmt.Errorf("kernel: decode owner messages: %w", err)
	}
	if n := len(v.Messages); n > 0 {
		rc.mu.Lock()
		rc.lastOwnerMsg = v.Messages[n-1].ID
		rc.mu.Unlock()
	}
	return v.Messages, nil
}
