package mission

import (
	"context"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/kernel"
)

// createExternal creates a mission run by an external engine: the
// backend logic makes its worktree, runs the engine confined behind the
// metering proxy, verifies the work and commits it (docs/ENGINES.md).
func (s *Service) createExternal(ctx context.Context, actor Actor, req CreateRequest, ws string) (Mission, error) {
	in := backend.Input{Objective: req.Objective, Criteria: req.Criteria, Boundaries: req.Boundaries, Workspace: ws, ProjectID: req.ProjectID,
		Engine: req.Engine, Model: req.Model, Network: req.Network}
	for i, argv := range req.Verify {
		v := backend.Verification{Argv: argv}
		if i < len(req.VerifyLabels) {
			v.Label = req.VerifyLabels[i]
		}
		in.Verify = append(in.Verify, v)
	}
	in.VerifyAllow = append(in.VerifyAllow, req.VerifyAllow...)
	if s.opts.HostConfig != nil {
		// The project's verification allowlist (verification.allow).
		snap, err := s.opts.HostConfig.Snapshot(ws)
		if err != nil {
			return Mission{}, invalid("the project's configuration: %v", err)
		}
		in.VerifyAllow = append(in.VerifyAllow, snap.Effective(in.ProjectID).Verification.Allow...)
	}
	b := kernel.Budget{USD: DefaultBudgetUSD, Turns: DefaultMaxTurns}
	if _, err := s.setting(ctx, SettingDefaultBudgetUSD, &b.USD); err != nil {
		return Mission{}, err
	}
	if _, err := s.setting(ctx, SettingDefaultMaxTurns, &b.Turns); err != nil {
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
	if err := in.Validate(); err != nil {
		return Mission{}, translate("validate", err)
	}
	var rec backend.CheckRecord
	found, err := s.setting(ctx, backend.CheckKey(in.Engine), &rec)
	if err != nil {
		return Mission{}, err
	}
	if err := backend.Offered(in.Engine, rec, found); err != nil {
		return Mission{}, invalid("%s", err.Error())
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
	title := req.Title
	if title == "" {
		title = firstLine(in.Objective, 80)
	}
	logic := backend.LogicName
	if req.Local {
		logic = backend.LocalLogicName // only aos run's process (or aos resume) claims it
	}
	// The audit record goes in the mission's own transaction.
	audit := s.auditRecord(actor, "mission.create", "", map[string]any{"engine": in.Engine, "budgetUsd": b.USD, "local": req.Local})
	mid, _, err := s.k.CreateMission(ctx, kernel.MissionSpec{ID: keyedMissionID(ctx), ProjectID: in.ProjectID, Title: title, Spec: in, Logic: logic, Input: in, Budget: b, Audit: &audit})
	if err != nil {
		return Mission{}, translate("create mission", err)
	}
	return s.GetMission(ctx, mid)
}

// defaultEngine is the project's default engine: defaults.engine of its
// configuration (.aos/config.yaml, the user's overrides), else "" (the
// built-in loop).
func (s *Service) defaultEngine(ws, projectID string) (string, error) {
	if s.opts.HostConfig == nil {
		return "", nil
	}
	snap, err := s.opts.HostConfig.Snapshot(ws)
	if err != nil {
		return "", invalid("the project's configuration: %v", err)
	}
	if e := snap.Effective(projectID).Defaults.Engine; e != nil {
		return *e, nil
	}
	return "", nil
}
