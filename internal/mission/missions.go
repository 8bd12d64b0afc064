package mission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/aos-run/aos/internal/wire"
	"strings"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/store"
)

// Settings keys of the mission defaults (JSON values). Absent keys fall
// back to the built-in defaults below.
const (
	SettingDefaultModel     = "default_model"      // string
	SettingDefaultEffort    = "default_effort"     // string
	SettingDefaultBudgetUSD = "default_budget_usd" // number
	SettingDefaultMaxTurns  = "default_max_turns"  // integer
)

// Built-in defaults, the same as aos run's flags. There is no built-in
// model: without one named or set as a default, the mission gets the first
// available model (availableModel), else it is refused.
const (
	DefaultBudgetUSD = 5.0
	DefaultMaxTurns  = 100
)

// CreateRequest is wire.CreateRequest, its JSON form on the API.
type CreateRequest = wire.CreateRequest

// GitResult is wire.GitResult, its JSON form on the API.
type GitResult = wire.GitResult

// Mission is wire.Mission, its JSON form on the API.
type Mission = wire.Mission

func missionView(m store.Mission) Mission {
	var in engine.Input
	_ = json.Unmarshal(m.Spec, &in) // a spec of another logic has no model
	return Mission{ID: m.ID, ProjectID: m.ProjectID, Title: m.Title, Status: m.Status, RootRunID: m.RootRunID, SpentUSD: m.SpentUSD,
		Model: in.Model, Effort: in.Effort, Spec: m.Spec, Result: m.Result, Git: gitResult(m, in), CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, EndedAt: m.EndedAt}
}

// gitResult is where the mission's work is, from the base recorded at
// creation, or the one its run reported.
func gitResult(m store.Mission, in engine.Input) *GitResult {
	base := in.Base
	if base == "" {
		var res kernel.Result
		var out engine.Outcome
		if json.Unmarshal(m.Result, &res) == nil && json.Unmarshal(res.Payload, &out) == nil {
			base = out.Base
		}
	}
	if base == "" || in.Objective == "" {
		return nil
	}
	br := engine.Branch(m.ID)
	return &GitResult{Branch: br, Base: base, Snapshot: in.Snapshot, Log: "git log " + base + ".." + br,
		Diff: "git diff " + base + "..." + br, Merge: "git merge " + br}
}

// CreateMission validates req, applies the defaults, refuses when today's
// spend has reached the daily cap or the model cannot run a mission
// (checkModel), and creates the mission, queued.
func (s *Service) CreateMission(ctx context.Context, actor Actor, req CreateRequest) (Mission, error) {
	ws, err := s.workspace(ctx, &req)
	if err != nil {
		return Mission{}, err
	}
	if req.Engine == "" {
		if req.Engine, err = s.defaultEngine(ws, req.ProjectID); err != nil {
			return Mission{}, err
		}
	}
	if req.Engine != "" && req.Engine != "builtin" {
		return s.createExternal(ctx, actor, req, ws)
	}
	in := engine.Input{Objective: req.Objective, Criteria: req.Criteria, Boundaries: req.Boundaries, Workspace: ws, ProjectID: req.ProjectID,
		Model: req.Model, Effort: req.Effort, Network: req.Network, ApprovalTimeoutSec: req.ApprovalTimeoutSec, IncludeUncommitted: req.IncludeUncommitted}
	b := kernel.Budget{USD: DefaultBudgetUSD, Turns: DefaultMaxTurns}
	if err := s.applyDefaults(ctx, &in, &b); err != nil {
		return Mission{}, err
	}
	if err := s.applyHostConfig(&in, &b, req); err != nil {
		return Mission{}, err
	}
	if req.BudgetUSD != nil {
		b.USD = *req.BudgetUSD
	}
	if req.MaxTurns != nil {
		b.Turns = *req.MaxTurns
	}
	if req.MaxWallSec != nil {
		b.WallSec = *req.MaxWallSec
	}
	if in.Model == "" {
		// Nothing named a model: the first available one, else a refusal
		// that says how to choose one.
		if in.Model, err = s.availableModel(ctx); err != nil {
			return Mission{}, err
		}
	}
	if err := in.Validate(); err != nil {
		return Mission{}, translate("validate", err)
	}
	if in.Effort != "" && !provider.Effort(in.Effort).Valid() {
		return Mission{}, invalid("effort must be low, medium, high, xhigh or max")
	}
	if b.USD < 0 || b.Turns < 0 || b.WallSec < 0 {
		return Mission{}, invalid("budgets must not be negative")
	}
	if len(req.Title) > 200 || len(req.ProjectID) > 200 {
		return Mission{}, invalid("title and projectId must be at most 200 bytes")
	}
	if err := s.checkDailyCap(ctx); err != nil {
		return Mission{}, err
	}
	if err := s.checkModel(ctx, in.Model); err != nil {
		return Mission{}, err
	}
	if err := prepareBase(ctx, &in); err != nil {
		return Mission{}, err
	}
	title := req.Title
	if title == "" {
		title = firstLine(in.Objective, 80)
	}
	logic := engine.LogicName
	if req.Local {
		logic = engine.LocalLogicName
	}
	// The audit record goes in the mission's own transaction: one commit
	// (one fsync, one turn of SQLite's write lock) per creation, and no
	// created mission without its record.
	audit := s.auditRecord(actor, "mission.create", "", map[string]any{"model": in.Model, "budgetUsd": b.USD, "local": req.Local})
	mid, _, err := s.k.CreateMission(ctx, kernel.MissionSpec{ID: keyedMissionID(ctx), ProjectID: in.ProjectID, Title: title, Spec: in, Logic: logic, Input: in, Budget: b, Audit: &audit})
	if err != nil {
		return Mission{}, translate("create mission", err)
	}
	return s.GetMission(ctx, mid)
}

// prepareBase records the commit a mission in a project starts from
// (engine.PrepareBase). A workspace that is not a project gets none: the
// mission fails at its setup, as it always did, unless it asked for the
// uncommitted changes, which only a project has. The project is checked
// once, by gitx.Open inside engine.PrepareBase (a `git rev-parse` run a
// second time for a CheckProject of our own cost every creation a git
// process).
func prepareBase(ctx context.Context, in *engine.Input) error {
	err := engine.PrepareBase(ctx, in)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gitx.ErrNotProject):
		if in.IncludeUncommitted {
			return invalid("includeUncommitted needs a project: %s", gitMsg(err))
		}
		return nil
	default:
		return invalid("the mission's base commit: %s", gitMsg(err))
	}
}

// gitMsg is a git failure's message fit for the caller.
func gitMsg(err error) string {
	var ge *gitx.Error
	if errors.As(err, &ge) {
		return ge.Msg
	}
	return strings.TrimPrefix(err.Error(), "engine: ")
}

func (s *Service) applyDefaults(ctx context.Context, in *engine.Input, b *kernel.Budget) error {
	var model, effort string
	if in.Model == "" {
		if _, err := s.setting(ctx, SettingDefaultModel, &model); err != nil {
			return err
		}
		in.Model = model
	}
	if in.Effort == "" {
		if _, err := s.setting(ctx, SettingDefaultEffort, &effort); err != nil {
			return err
		}
		in.Effort = effort
	}
	if _, err := s.setting(ctx, SettingDefaultBudgetUSD, &b.USD); err != nil {
		return err
	}
	if _, err := s.setting(ctx, SettingDefaultMaxTurns, &b.Turns); err != nil {
		return err
	}
	return nil
}

// checkDailyCap refuses when today's spend is at or above a set cap.
func (s *Service) checkDailyCap(ctx context.Context) error {
	capUSD, err := s.k.DailyCap(ctx)
	if err != nil {
		return translate("read daily cap", err)
	}
	if capUSD <= 0 {
		return nil
	}
	spent, err := s.k.SpentToday(ctx)
	if err != nil {
		return translate("read today's spend", err)
	}
	if spent >= capUSD {
		return &Error{Code: CodeDailyCap, Msg: fmt.Sprintf("today's spend $%.2f has reached the daily cap $%.2f", spent, capUSD)}
	}
	return nil
}

func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	r := []rune(s)
	if len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

var missionStatuses = map[string]bool{kernel.StatusQueued: true, kernel.StatusRunning: true, kernel.StatusWaiting: true, kernel.StatusDone: true,
	kernel.StatusPartial: true, kernel.StatusBlocked: true, kernel.StatusFailed: true, kernel.StatusBudgetExhausted: true, kernel.StatusCancelled: true}

// ListMissionsRequest filters ListMissions.
type ListMissionsRequest struct {
	Status    string
	ProjectID string
	Limit     int // 1..1000, default 100
}

// ListMissions returns missions, newest first.
func (s *Service) ListMissions(ctx context.Context, r ListMissionsRequest) ([]Mission, error) {
	if r.Status != "" && !missionStatuses[r.Status] {
		return nil, invalid("unknown status %q", r.Status)
	}
	if r.Limit == 0 {
		r.Limit = 100
	}
	if r.Limit < 1 || r.Limit > 1000 {
		return nil, invalid("limit must be 1..1000")
	}
	ms, err := s.st.ListMissions(ctx, store.ListMissionsParams{Status: r.Status, ProjectID: r.ProjectID, Limit: r.Limit})
	if err != nil {
		return nil, translate("list missions", err)
	}
	out := make([]Mission, 0, len(ms))
	for _, m := range ms {
		out = append(out, missionView(m))
	}
	return out, nil
}

// GetMission returns one mission.
func (s *Service) GetMission(ctx context.Context, id string) (Mission, error) {
	m, err := s.k.GetMission(ctx, id)
	if err != nil {
		return Mission{}, translate("get mission", err)
	}
	return missionView(m), nil
}

// CancelMission cancels a mission and every run of it.
func (s *Service) CancelMission(ctx context.Context, actor Actor, id string) (Mission, error) {
	if _, err := s.k.GetMission(ctx, id); err != nil {
		return Mission{}, translate("cancel mission", err)
	}
	if err := s.k.RequestCancel(ctx, id); err != nil {
		return Mission{}, translate("cancel mission", err)
	}
	s.audit(ctx, actor, "mission.cancel", id, nil)
	return s.GetMission(ctx, id)
}
