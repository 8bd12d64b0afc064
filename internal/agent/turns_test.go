package agent_test

import (
	"context"
	"testing"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestAmbiguousSendReconciled: a send whose receipt never recorded its
// mission (the process died between creating the mission and updating the
// receipt) is reconciled after a restart: the retry finds the mission by
// its receipt id and sends nothing again. A pending receipt without a
// mission creates exactly one.
func TestAmbiguousSendReconciled(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		ctx := context.Background()
		b.pkg(fixture{id: "fix/turn", doctor: okDoctor}, true)
		o := b.settled(b.mustPrepare("turn-prep", "fix/turn", agent.Workspace{Kind: "new"}).OperationID)
		if o.State != agent.StateReady {
			t.Fatalf("%s", js(o))
		}
		send := agent.TurnSendRequest{MachineID: b.svc.MachineID(), AgentID: *o.AgentID, IdempotencyKey: "task-1", Text: "Do the thing."}
		rc, err := b.svc.SendTurn(ctx, agent.OwnerIdentity, send)
		if err != nil || rc.MissionID == "" {
			t.Fatalf("send = %s, %v", js(rc), err)
		}
		// Lose the receipt's last update, then restart.
		lose := func(id string) {
			t.Helper()
			tr, err := db.Store.GetAgentTurn(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			tr.MissionID, tr.State = "", agent.ReceiptPending
			if err := db.Store.UpdateAgentTurn(ctx, tr); err != nil {
				t.Fatal(err)
			}
		}
		lose(rc.ReceiptID)
		b.stop()
		b.start(nil)
		again, err := b.svc.SendTurn(ctx, agent.OwnerIdentity, send)
		if err != nil || again.ReceiptID != rc.ReceiptID || again.MissionID != rc.MissionID || !again.Duplicate {
			t.Fatalf("retry after restart = %s, %v; want the first mission %s", js(again), err, rc.MissionID)
		}
		// A pending receipt whose mission was never created gets one.
		tr := store.AgentTurn{ID: "rc_pending01", Identity: agent.OwnerIdentity, IdemKey: "task-2", AgentID: *o.AgentID, State: agent.ReceiptPending, CreatedAt: 1, UpdatedAt: 1}
		send2 := send
		send2.IdempotencyKey, send2.Text = "task-2", "Another thing."
		// The fingerprint must match the text: take it from a real send
		// under a scratch key, then move it over.
		probe, err := b.svc.SendTurn(ctx, "device:probe", send2)
		if err != nil {
			t.Fatal(err)
		}
		pr, _ := db.Store.GetAgentTurn(ctx, probe.ReceiptID)
		tr.Fingerprint = pr.Fingerprint
		if err := db.Store.InsertAgentTurn(ctx, tr); err != nil {
			t.Fatal(err)
		}
		got, err := b.svc.SendTurn(ctx, agent.OwnerIdentity, send2)
		if err != nil || got.ReceiptID != tr.ID || got.MissionID == "" || got.MissionID == probe.MissionID {
			t.Fatalf("pending without a mission = %s, %v", js(got), err)
		}
		ms, _ := b.ms.ListMissions(ctx, mission.ListMissionsRequest{})
		if len(ms) != 3 {
			t.Fatalf("%d missions, want 3 (first task once, the probe, the pending one)", len(ms))
		}
	})
}

// TestSendAcrossServersOneMission: two services on one database (two
// servers) get the same send. The first has recorded the receipt and is
// creating the mission (held); the second finds the receipt pending and
// delivers it. Both answer the one receipt with the one mission: the
// creation is keyed by the receipt, not guarded by a lock of one process.
func TestSendAcrossServersOneMission(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		ctx := context.Background()
		b.pkg(fixture{id: "fix/send2", doctor: okDoctor}, true)
		o := b.settled(b.mustPrepare("send2-prep", "fix/send2", agent.Workspace{Kind: "new"}).OperationID)
		if o.State != agent.StateReady {
			t.Fatalf("%s", js(o))
		}
		g := gatedMissions{Missions: b.ms, gated: "mission", entered: make(chan struct{}, 1), gate: make(chan struct{})}
		first := b.peer(g)
		send := agent.TurnSendRequest{MachineID: b.svc.MachineID(), AgentID: *o.AgentID, IdempotencyKey: "both-1", Text: "Do it once."}
		type answer struct {
			rc  agent.Receipt
			err error
		}
		done := make(chan answer, 1)
		go func() {
			rc, err := first.SendTurn(ctx, agent.OwnerIdentity, send)
			done <- answer{rc, err}
		}()
		released := false
		t.Cleanup(func() {
			if !released {
				close(g.gate)
			}
		})
		<-g.entered // the first is creating the mission
		second, err := b.svc.SendTurn(ctx, agent.OwnerIdentity, send)
		if err != nil || second.MissionID == "" {
			t.Fatalf("the second server's send = %s, %v", js(second), err)
		}
		close(g.gate)
		released = true
		a := <-done
		if a.err != nil || a.rc.ReceiptID != second.ReceiptID || a.rc.MissionID != second.MissionID {
			t.Fatalf("the first server's send = %s, %v; the second's %s", js(a.rc), a.err, js(second))
		}
		ms, err := b.ms.ListMissions(ctx, mission.ListMissionsRequest{})
		if err != nil || len(ms) != 1 {
			t.Fatalf("%d missions (%v), want 1", len(ms), err)
		}
	})
}
