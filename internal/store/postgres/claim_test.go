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
	claim := func(now int64, within time.Duration) error {
		ctx, cancel := context.WithTimeout(bg, within)
		defer cancel()
		_, _, err := s.ClaimStart(ctx, store.ClaimRunParams{WorkerID: "w", Now: now, LeaseUntil: now + 50})
		return err
	}
	// A claim statement would wait for the lock past any deadline (it is
	// held until the rollback below), so a generous one fails it all the
	// same, and a slow first read or preparation (-race, a loaded
	// machine) does not.
	if err := claim(10, 10*time.Second); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("claim with nothing to claim, events locked by another session: %v, want not found without waiting for the lock", err)
	}
	// At 200 the queued run is due and the lease has expired: the claim
	// statement runs, and waits for the lock.
	if err := claim(200, 500*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("claim with a run to claim, events locked by another session: %v, want it to wait until its ctx ended", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := claim(200, 10*time.Second); err != nil {
		t.Fatalf("claim after the release: %v", err)
	}
}
