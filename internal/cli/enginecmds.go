package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/kernel"
)

// createExternal creates a mission run by an external engine
// (docs/ENGINES.md): the backend logic makes the mission's worktree,
// runs the engine confined and metered, verifies and commits.
func (s *session) createExternal(ctx context.Context, f runFlags, objective, dir string) (string, error) {
	in := backend.Input{Objective: objective, Criteria: f.criteria, Workspace: dir, Engine: f.engine, Model: f.model, Network: f.network, VerifyAllow: f.allow}
	if f.network == "none" {
		in.Network = ""
	}
	for _, v := range f.verify {
		argv := strings.Fields(v)
		if len(argv) == 0 {
			return "", &exitError{code: 1, msg: "--verify is empty"}
		}
		in.Verify = append(in.Verify, backend.Verification{Label: v, Argv: argv})
	}
	if err := in.Validate(); err != nil {
		return "", &exitError{code: 1, msg: err.Error()}
	}
	if capUSD, err := s.k.DailyCap(ctx); err == nil && capUSD > 0 {
		if spent, err := s.k.SpentToday(ctx); err == nil && spent >= capUSD {
			return "", &exitError{code: 3, msg: fmt.Sprintf("today's spend $%.2f has reached the daily cap $%.2f", spent, capUSD)}
		}
	}
	title := objective
	if len(title) > 80 {
		title = title[:80] + "…"
	}
	mid, _, err := s.k.CreateMission(ctx, kernel.MissionSpec{Title: title, Logic: backend.LogicName, Input: in, Spec: in,
		Budget: kernel.Budget{USD: f.budgetUSD, Turns: f.maxTurns, WallSec: f.wallSec}})
	if err != nil {
		return "", err
	}
	return mid, nil
}
