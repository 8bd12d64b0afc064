package mission

import (
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/hostconfig"
	"github.com/aos-run/aos/internal/kernel"
)

// applyHostConfig applies the project's configuration files (the latest
// valid snapshot of .aos/config.yaml and the user-local file) over the
// settings already applied, under what the request says explicitly:
// explicit request > configuration (project override > user override >
// repo file) > settings > built-in defaults. It selects the mission's
// route and pins the mission to the snapshot's revision. Without a
// registry it does nothing.
func (s *Service) applyHostConfig(in *engine.Input, b *kernel.Budget, req CreateRequest) error {
	if s.opts.HostConfig == nil {
		return nil
	}
	snap, err := s.opts.HostConfig.Snapshot(in.Workspace)
	if err != nil {
		return invalid("the project's configuration: %v", err)
	}
	eff := snap.Effective(in.ProjectID)
	d := eff.Defaults
	if req.Effort == "" && d.Effort != nil {
		in.Effort = *d.Effort
	}
	if req.Network == "" && d.Network != nil {
		in.Network = *d.Network
	}
	if d.Budgets.USD != nil {
		b.USD = *d.Budgets.USD
	}
	if d.Budgets.MaxTurns != nil {
		b.Turns = *d.Budgets.MaxTurns
	}
	if d.Budgets.MaxWallSec != nil {
		b.WallSec = *d.Budgets.MaxWallSec
	}
	fallback := ""
	if req.Model == "" {
		fallback = in.Model // the default_model setting, if any
	}
	dec := eff.Select(hostconfig.SelectRequest{Model: req.Model, ProjectID: in.ProjectID, Fallback: fallback})
	// Engine targets are for the external engines; the built-in loop
	// routes along the model targets.
	if ms := dec.Models(); len(ms) > 0 {
		in.Model = ms[0]
		if dec.RuleID != "" {
			in.Route = &engine.Route{RuleID: dec.RuleID, Reason: dec.Reason, PolicyRevision: dec.PolicyRevision, Fallbacks: ms[1:], FailoverOn: dec.FailoverOn, FailureBudget: dec.FailureBudgets[hostconfig.StageModel]}
		}
	}
	in.ConfigRevision = snap.Revision
	return nil
}

// ProjectConfig returns the effective configuration (latest valid
// revision) of the project at dir, for the front ends and the external
// engines' verification allowlist (Verification.Allow). ok is false when
// the service reads no configuration files.
func (s *Service) ProjectConfig(dir, projectID string) (eff hostconfig.Effective, ok bool, err error) {
	if s.opts.HostConfig == nil {
		return hostconfig.Effective{}, false, nil
	}
	ws, err := s.confine(dir)
	if err != nil {
		return hostconfig.Effective{}, false, err
	}
	snap, err := s.opts.HostConfig.Snapshot(ws)
	if err != nil {
		return hostconfig.Effective{}, false, invalid("the project's configuration: %v", err)
	}
	return snap.Effective(projectID), true, nil
}
