package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestStopDrainsThenReleases: a server stopping cleanly in the middle of a
// preparation's setup stops the setup (its process group is killed), lets
// the job return at its boundary, and then releases the operation's
// lease, so the next start recovers the operation at once
// (RECOVERY_REQUIRED, nothing replayed) instead of after the lease runs
// out.
func TestStopDrainsThenReleases(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db, setupOpts{lease: restartLease})
		ctx := context.Background()
		b.pkg(fixture{id: "fix/drain", setup: blockSetup, doctor: okDoctor}, true)
		op := b.mustPrepare("drain-1", "fix/drain", agent.Workspace{Kind: "new", Name: "drain"})
		waitFor(t, 30*time.Second, "setup", func() bool { return b.lines("fix/drain") == 1 }, func() string { return "" })
		row := func() store.AgentOperation {
			t.Helper()
			r, err := db.Store.GetAgentOperation(ctx, op.OperationID)
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		b.stop() // the service's context ends: the setup is stopped, the job returns, the service drains
		var r store.AgentOperation
		waitFor(t, 30*time.Second, "the release", func() bool { r = row(); return r.LeaseUntil == 0 }, func() string { return js(r) })
		if r.State != agent.StateRunning || r.Phase != agent.PhaseSetup {
			t.Fatalf("released: %s, want it left running in setup for recovery", js(r))
		}
		b.svc.Wait()
		b.start(nil) // recovery at start takes the released operation now
		o, err := b.svc.Operation(ctx, agent.OwnerIdentity, op.OperationID)
		if err != nil || o.State != agent.StateNeedsUserAction || o.Error == nil || o.Error.Code != agent.CodeRecoveryRequired {
			t.Fatalf("right after the restart: %s, %v", js(o), err)
		}
		if n := b.lines("fix/drain"); n != 1 {
			t.Fatalf("setup ran %d times", n)
		}
	})
}
