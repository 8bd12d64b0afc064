package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestClaimFindingNothingRunsNoClaimStatement: a claim attempt with
// nothing to claim is one read. Another session holds the events table in
// SHARE mode, which the claim statement (a writable CTE that inserts
// run.claimed) must wait for and a plain read need not: the attempt
// returns not found at once; with a run to claim, it waits; after the
// release, it claims.
func TestClaimFindingNothingRunsNoClaimStatement(t *testing.T) {
	db := storetest.New(t, "postgres")
	s, bg := db.Store, context.Background()
	// Not claimable at 10: done, queued for later, leased until later.
	for _, r := range []store.Run{
		{ID: "done", Status: "done"},
		{ID: "later", Status: "queued", WakeAt: 100},
		{ID: "leased", Status: "running", LeaseOwner: "w0", LeaseExpiresAt: 100, FencingToken: 1},
	} {
		r.MissionID, r.Logic, r.CreatedAt, r.UpdatedAt = "m"+r.ID, "l", 1, 1
		if err := s.InsertMissionRun(bg, store.Mission{ID: r.MissionID, Title: "t", Spec: []byte(`{}`), Status: "queued", RootRunID: r.ID, CreatedAt: 1, UpdatedAt: 1}, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	tx := lockTable(t, db.DSN, "events", "SHARE")
	claim := func(now int64) error {
		ctx, cancel := context.WithTimeout(bg, 500*time.Millisecond)
		defer cancel()
		_, _, err := s.ClaimStart(ctx, store.ClaimRunParams{WorkerID: "w", Now: now, LeaseUntil: now + 50})
		return err
	}
	if err := claim(10); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("claim with nothing to claim, events locked by another session: %v, want not found at once", err)
	}
	// At 200 the queued run is due and the lease has expired: the claim
	// statement runs, and waits for the lock.
	if err := claim(200); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("claim with a run to claim, events locked by another session: %v, want it to wait until its ctx ended", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := claim(200); err != nil {
		t.Fatalf("claim after the release: %v", err)
	}
}
