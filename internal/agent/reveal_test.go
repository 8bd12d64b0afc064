package agent_test

import (
	"context"
	"testing"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestRevealLifecycle: the pending reveal exists as soon as the agent is
// created (before the operation records it or is ready), survives a
// restart, is acknowledged once (the first time kept, persisted across a
// restart) and is never delivered again; a duplicate prepare adds none.
func TestRevealLifecycle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx := context.Background()
		created := make(chan string, 1)
		hold := make(chan struct{})
		b := setup(t, db, setupOpts{afterCreate: func(op string) { created <- op; <-hold }})
		b.pkg(fixture{id: "fix/rev", doctor: okDoctor}, true)
		ws := agent.Workspace{Kind: "new", Name: "rev"}
		op := b.mustPrepare("rev-1", "fix/rev", ws)
		<-created
		pending, err := b.svc.PendingReveals(ctx)
		if err != nil || len(pending) != 1 {
			close(hold)
			t.Fatalf("pending at creation = %s, %v", js(pending), err)
		}
		r := pending[0]
		a, aerr := db.Store.GetAgentByOperation(ctx, op.OperationID)
		close(hold)
		if aerr != nil || r.OperationID != op.OperationID || r.AgentID != a.ID || r.MachineID != b.svc.MachineID() ||
			r.AgentName != "rev" || r.PackageID != "fix/rev" || r.OpenedAt != nil {
			t.Fatalf("reveal = %s (agent %+v, %v)", js(r), a, aerr)
		}
		if o := b.settled(op.OperationID); o.State != agent.StateReady {
			t.Fatalf("operation = %s", js(o))
		}

		// A restart delivers it again; a duplicate prepare adds nothing.
		b.stop()
		b.svc.Wait()
		b.start(nil)
		if dup, err := b.prepare(agent.OwnerIdentity, "rev-1", "fix/rev", ws); err != nil || dup.Status != agent.StatusDuplicate {
			t.Fatalf("duplicate = %s, %v", js(dup), err)
		}
		if p, err := b.svc.PendingReveals(ctx); err != nil || len(p) != 1 || p[0].OperationID != op.OperationID {
			t.Fatalf("pending after restart = %s, %v", js(p), err)
		}

		if _, err := b.svc.RevealOpened(ctx, op.OperationID, agent.RevealOpenedRequest{AgentID: "ag_other"}); code(err) != agent.CodeOperationNotFound {
			t.Fatalf("ack of another agent: %v", err)
		}
		if _, err := b.svc.RevealOpened(ctx, "nope", agent.RevealOpenedRequest{AgentID: r.AgentID}); code(err) != agent.CodeOperationNotFound {
			t.Fatalf("ack of an unknown operation: %v", err)
		}
		first, err := b.svc.RevealOpened(ctx, op.OperationID, agent.RevealOpenedRequest{AgentID: r.AgentID})
		if err != nil || first.OpenedAt == nil {
			t.Fatalf("ack = %s, %v", js(first), err)
		}
		b.stop()
		b.svc.Wait()
		b.start(nil)
		if p, err := b.svc.PendingReveals(ctx); err != nil || len(p) != 0 {
			t.Fatalf("pending after the ack and a restart = %s, %v", js(p), err)
		}
		again, err := b.svc.RevealOpened(ctx, op.OperationID, agent.RevealOpenedRequest{AgentID: r.AgentID})
		if err != nil || again.OpenedAt == nil || *again.OpenedAt != *first.OpenedAt {
			t.Fatalf("second ack = %s, %v (first %s)", js(again), err, js(first))
		}
	})
}
