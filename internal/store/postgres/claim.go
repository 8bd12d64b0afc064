package postgres

import (
	"context"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

// ClaimStart first looks for a run to claim with one plain read, and runs
// the claim (a writable CTE over runs, missions, events and steps) only if
// there is one. A worker makes a claim attempt after each run it ran and
// at every poll, and most find nothing; the claim statement is planned
// at each execution (its parameters vary), and that planning, 1–15 ms of
// backend CPU on a loaded 2-core machine against well under 1 ms for the
// look, was what a mission created right after a run's end waited for
// (its hand-off waits for the worker's attempt) in the tail of
// sequential 0-step runs. A run committed after the look is found by the
// worker's next attempt: its creation rings the worker (NOTIFY on
// aos_work, or in process), as when a claim statement ran just before
// that commit.
func (s *Store) ClaimStart(ctx context.Context, p store.ClaimRunParams) (store.Run, []store.Step, error) {
	ok, err := s.Claimable(ctx, p)
	if err != nil {
		return store.Run{}, nil, fmt.Errorf("claim run: %w", err)
	}
	if !ok {
		return store.Run{}, nil, fmt.Errorf("claim run: %w", store.ErrNotFound)
	}
	return s.DB.ClaimStart(ctx, p)
}
