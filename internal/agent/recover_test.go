package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store/storetest"
)

func scriptServer(t *testing.T) string { return scripttest.Start(t, finishScript).URL() }

// TestRecoverCreationReceipt: the process stops after the agent's creation
// receipt is committed and before the operation records it; at the next
// start the operation recovers the agent id (rechecked, launched) and no
// second agent is created.
func TestRecoverCreationReceipt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		created := make(chan string, 1)
		hold := make(chan struct{})
		var once sync.Once
		unhold := func() { once.Do(func() { close(hold) }) }
		b := setup(t, db, setupOpts{afterCreate: func(op string) { created <- op; <-hold }, lease: restartLease})
		t.Cleanup(unhold) // runs before the service's cleanup waits for its jobs
		b.pkg(fixture{id: "fix/rec", setup: countSetup, doctor: okDoctor}, true)
		op := b.mustPrepare("rec-1", "fix/rec", agent.Workspace{Kind: "new", Name: "rec"})
		<-created
		if o := b.op(op.OperationID); o.AgentID != nil || o.Phase != agent.PhaseCreate {
			t.Fatalf("before the stop: %s", js(o))
		}
		// The old service stops; its job, let go, ends at its next
		// boundary without recording the agent (its context is over), and
		// the service releases its lease once the job is over.
		b.stop()
		unhold()
		b.start(nil)
		o := b.settled(op.OperationID)
		if o.State != agent.StateReady || o.AgentID == nil {
			t.Fatalf("after restart: %s", js(o))
		}
		ags, _ := b.svc.ListAgents(context.Background(), "", 0)
		if len(ags) != 1 || ags[0].AgentID != *o.AgentID {
			t.Fatalf("agents = %s", js(ags))
		}
		if b.lines("fix/rec") != 1 {
			t.Fatal("setup ran again")
		}
	})
}

// TestRecoverWithoutReceipt: an operation interrupted before creation
// becomes needs_user_action / RECOVERY_REQUIRED at the next start, and
// nothing is replayed; the interrupted install is marked broken.
func TestRecoverWithoutReceipt(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db, setupOpts{lease: restartLease})
		b.pkg(fixture{id: "fix/int", setup: blockSetup, doctor: okDoctor}, true)
		op := b.mustPrepare("int-1", "fix/int", agent.Workspace{Kind: "new", Name: "int"})
		waitFor(t, 30e9, "setup", func() bool { return b.lines("fix/int") == 1 }, func() string { return "" })
		b.stop() // kills the setup's process group, as a dying server would lose it
		b.svc.Wait()
		b.start(nil)
		o := b.settled(op.OperationID)
		if o.State != agent.StateNeedsUserAction || o.Error == nil || o.Error.Code != agent.CodeRecoveryRequired || o.AgentID != nil || o.Guidance == nil {
			t.Fatalf("after restart: %s", js(o))
		}
		insp, _ := b.svc.StoreInspect(context.Background(), agent.OwnerIdentity, "fix/int")
		if insp.Package.Installation != agent.InstallBroken {
			t.Fatalf("interrupted install = %s", js(insp.Package))
		}
		again, err := b.prepare(agent.OwnerIdentity, "int-1", "fix/int", agent.Workspace{Kind: "new", Name: "int"})
		if err != nil || again.Status != agent.StatusDuplicate || again.Operation.State != agent.StateNeedsUserAction {
			t.Fatalf("retry the key after recovery: %s, %v", js(again), err)
		}
		b.svc.Wait()
		if b.lines("fix/int") != 1 {
			t.Fatal("setup was replayed")
		}
	})
}
