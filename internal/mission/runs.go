package mission

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/aos-run/aos/internal/wire"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/store"
)

// Run is wire.Run, its JSON form on the API.
type Run = wire.Run

func runView(r store.Run) Run {
	usage := r.Usage
	if len(usage) == 0 {
		usage = json.RawMessage("{}")
	}
	return Run{ID: r.ID, MissionID: r.MissionID, ParentRunID: r.ParentRunID, Logic: r.Logic, Status: r.Status, CancelRequested: r.CancelRequested,
		Budget: wire.Budget{USD: r.BudgetUSD, Turns: r.BudgetTurns, WallSec: r.BudgetWallSec}, Usage: usage, SpentUSD: r.SpentUSD, Turns: r.Turns,
		Result: r.Result, Error: r.Error, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, StartedAt: r.StartedAt, EndedAt: r.EndedAt}
}

// ListRuns returns a mission's runs.
func (s *Service) ListRuns(ctx context.Context, missionID string) ([]Run, error) {
	if _, err := s.k.GetMission(ctx, missionID); err != nil {
		return nil, translate("list runs", err)
	}
	rs, err := s.st.ListRunsByMission(ctx, missionID)
	if err != nil {
		return nil, translate("list runs", err)
	}
	out := make([]Run, 0, len(rs))
	for _, r := range rs {
		out = append(out, runView(r))
	}
	return out, nil
}

// GetRun returns one run.
func (s *Service) GetRun(ctx context.Context, id string) (Run, error) {
	r, err := s.k.GetRun(ctx, id)
	if err != nil {
		return Run{}, translate("get run", err)
	}
	return runView(r), nil
}

// MaxBodyChars bounds each of a step's request, result and error bodies as
// presented, in characters (runes). A longer body is sent as a JSON string
// of its first MaxBodyChars characters, with Truncated set.
const MaxBodyChars = 20000

// Step is a journaled step as presented to a front end: bodies bounded and
// the provider's native response removed from model calls.
type Step struct {
	RunID     string          `json:"runId"`
	Seq       int             `json:"seq"`
	Kind      string          `json:"kind"`
	Name      string          `json:"name"`
	Effect    string          `json:"effect" enum:"pure,read,model_call,idempotent_write,non_idempotent"`
	Status    string          `json:"status" enum:"started,completed,failed"`
	Request   json.RawMessage `json:"request"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     json.RawMessage `json:"error,omitempty"`
	Usage     json.RawMessage `json:"usage,omitempty"`
	CostUSD   float64         `json:"costUsd"`
	StartedAt int64           `json:"startedAt"`
	EndedAt   int64           `json:"endedAt,omitempty"`
	// Truncated is set when any body was cut to MaxBodyChars.
	Truncated bool `json:"truncated"`
}

// ListStepsRequest pages a run's steps.
type ListStepsRequest struct {
	RunID string
	// After is the last seq already seen; -1 (the default) starts at the
	// first step.
	After *int
	// Limit is 1..500, default 100.
	Limit int
}

// ListSteps returns a run's steps after a position, in order.
func (s *Service) ListSteps(ctx context.Context, r ListStepsRequest) ([]Step, error) {
	after := -1
	if r.After != nil {
		after = *r.After
	}
	if after < -1 {
		return nil, invalid("after must be ≥ -1")
	}
	if r.Limit == 0 {
		r.Limit = 100
	}
	if r.Limit < 1 || r.Limit > 500 {
		return nil, invalid("limit must be 1..500")
	}
	if _, err := s.k.GetRun(ctx, r.RunID); err != nil {
		return nil, translate("list steps", err)
	}
	rows, err := s.st.ListSteps(ctx, r.RunID, after, r.Limit)
	if err != nil {
		return nil, translate("list steps", err)
	}
	out := make([]Step, 0, len(rows))
	for _, st := range rows {
		out = append(out, stepView(st))
	}
	return out, nil
}

func stepView(st store.Step) Step {
	v := Step{RunID: st.RunID, Seq: st.Seq, Kind: st.Kind, Name: st.Name, Effect: st.Effect, Status: st.Status, Usage: st.Usage,
		CostUSD: st.CostUSD, StartedAt: st.StartedAt, EndedAt: st.EndedAt}
	result := st.Result
	if st.Kind == "model_call" {
		result = WithoutNative(result)
	}
	var t1, t2, t3 bool
	v.Request, t1 = Bound(st.Request, MaxBodyChars)
	v.Result, t2 = Bound(result, MaxBodyChars)
	v.Error, t3 = Bound(st.Error, MaxBodyChars)
	v.Truncated = t1 || t2 || t3
	return v
}

// WithoutNative removes the provider's native response ("native") from a
// model_call result object. Anything that is not an object is returned as
// it is.
func WithoutNative(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !bytes.Contains(raw, []byte(`"native"`)) {
		return raw
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if _, ok := m["native"]; !ok {
		return raw
	}
	delete(m, "native")
	b, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return b
}

// Bound returns raw unchanged when it has at most n characters, else a JSON
// string holding its first n characters, and true.
func Bound(raw json.RawMessage, n int) (json.RawMessage, bool) {
	if len(raw) <= n || utf8.RuneCount(raw) <= n {
		return raw, false
	}
	cut := 0
	for i := 0; i < n; i++ {
		_, size := utf8.DecodeRune(raw[cut:])
		cut += size
	}
	b, _ := json.Marshal(string(raw[:cut]))
	return b, true
}
