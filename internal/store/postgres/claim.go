package postgres

import (
	"context"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

// ClaimStart first looks for a run to claim with one plain read, and runs
// the claim (a writable CTE over runs, missions, events and steps, planned
// at each execution since its parameters vary) only if there is one. A
// worker makes a claim attempt after each run it ran and at every poll,
// and most find nothing; a mission created right after a run's end waits
// for that attempt (its hand-off does), and every idle worker polls. A run
// committed after the look is found by the worker's next attempt: its
// creation rings the worker (NOTIFY on aos_work, or in process), as when
// a claim statement ran just before that commit.
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
