package sqlite

import (
	"context"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

// ClaimStart first looks through the read pool for a run to claim, and
// claims (a write transaction behind the write lock, writelock.go) only if
// there is one. A worker makes a claim attempt after each run it ran and
// at every poll, and most find nothing: those no longer take the write
// lock and the single write connection, which a mission's creation in
// this or another process may be waiting for (the creation-time tail of
// sequential runs). A run committed after the look is found by the
// worker's next attempt: its creation rings the worker (in process, or
// through the store's socket bus), as when a claim statement ran just
// before that commit.
func (s *Store) ClaimStart(ctx context.Context, p store.ClaimRunParams) (store.Run, []store.Step, error) {
	ok, err := s.reads.Claimable(ctx, p)
	if err != nil {
		return store.Run{}, nil, fmt.Errorf("claim run: %w", err)
	}
	if !ok {
		return store.Run{}, nil, fmt.Errorf("claim run: %w", store.ErrNotFound)
	}
	return s.DB.ClaimStart(ctx, p)
}
