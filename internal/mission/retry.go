package mission

import (
	"context"
	"encoding/json"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
)

// RetryMission creates a new mission from an ended one's objective,
// criteria, boundaries, project or workspace, model, effort, network,
// approval timeout and budgets — after a missing API key was set, say, or a
// budget ran out and the owner wants another go with a fresh budget. The
// ended mission is left as it is; the new one goes through every check
// CreateMission makes (the workspace must still be inside the root, the
// daily cap, the defaults for what the original left empty). A mission
// still live is ErrConflict: cancel it first.
func (s *Service) RetryMission(ctx context.Context, actor Actor, id string) (Mission, error) {
	m, err := s.st.GetMission(ctx, id)
	if err != nil {
		return Mission{}, translate("retry mission", err)
	}
	if !kernel.IsTerminal(m.Status) {
		return Mission{}, &Error{Code: CodeConflict, Msg: "the mission is " + m.Status + "; only an ended mission can be retried (cancel it first)"}
	}
	var in engine.Input
	if err := json.Unmarshal(m.Spec, &in); err != nil || in.Objective == "" {
		return Mission{}, invalid("the mission was not created by the agent logic and cannot be retried")
	}
	root, err := s.st.GetRun(ctx, m.RootRunID)
	if err != nil {
		return Mission{}, translate("retry mission", err)
	}
	usd, turns, wall := root.BudgetUSD, root.BudgetTurns, root.BudgetWallSec
	req := CreateRequest{Title: m.Title, Objective: in.Objective, Criteria: in.Criteria, Boundaries: in.Boundaries, ProjectID: in.ProjectID,
		Workspace: in.Workspace, Model: in.Model, Effort: in.Effort, Network: in.Network, ApprovalTimeoutSec: in.ApprovalTimeoutSec,
		IncludeUncommitted: in.IncludeUncommitted, BudgetUSD: &usd, MaxTurns: &turns, MaxWallSec: &wall}
	nm, err := s.CreateMission(ctx, actor, req)
	if err != nil {
		return Mission{}, err
	}
	s.audit(ctx, actor, "mission.retry", nm.ID, map[string]any{"from": id})
	return nm, nil
}
