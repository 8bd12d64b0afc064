package worker

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/tmpdirs"
)

// SweepEvery is how often a worker removes the worktrees of missions that
// ended without removing theirs.
const SweepEvery = 5 * time.Minute

// MissionLookup reads a mission's state for engine.SweepWorktrees: ended
// or not, and its root run's input. A mission of another logic is unknown.
func MissionLookup(st store.Store) engine.MissionLookup {
	return func(ctx context.Context, id string) (bool, engine.Input, bool, error) {
		m, err := st.GetMission(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return false, engine.Input{}, false, nil
		}
		if err != nil {
			return false, engine.Input{}, false, err
		}
		// The root run's input is the agent loop's: it names the project.
		root, err := st.GetRun(ctx, m.RootRunID)
		if err != nil {
			return false, engine.Input{}, false, err
		}
		var in engine.Input
		if root.Logic != engine.LogicName || json.Unmarshal(root.Input, &in) != nil || in.Workspace == "" {
			return false, in, false, nil
		}
		return kernel.IsTerminal(m.Status), in, true, nil
	}
}

// SweepWorktrees removes, once and then every SweepEvery until ctx ends,
// the worktrees under root of missions that have ended: cancelled while
// idle, failed, or interrupted between their end and their removal step.
func SweepWorktrees(ctx context.Context, st store.Store, root string, log *slog.Logger) {
	t := time.NewTicker(SweepEvery)
	defer t.Stop()
	for {
		if n, err := engine.SweepWorktrees(ctx, root, MissionLookup(st)); err != nil && ctx.Err() == nil {
			log.Warn("sweep worktrees", "err", err.Error())
		} else if n > 0 {
			log.Info("removed worktrees of ended missions", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SweepTmp removes what killed aos processes of this user left under tmp
// (hardened git's HOMEs, the sandbox probe's trees), once they are older
// than any live process's (tmpdirs.StaleAfter). A worker and `aos run`
// call it as they start.
func SweepTmp(tmp string, now time.Time, log *slog.Logger) {
	n := tmpdirs.Sweep(tmp, tmpdirs.GitHome, false, now) + tmpdirs.Sweep(tmp, tmpdirs.Probe, true, now) + tmpdirs.Sweep(tmp, tmpdirs.ProbeOpen, true, now)
	if n > 0 {
		log.Info("removed directories killed processes left under TMPDIR", "count", n, "dir", tmp)
	}
}
