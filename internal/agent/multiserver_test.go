package agent_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// peer starts another agent service on b's database, workspace root and
// data dir, as a second aos server on the same host would be: its own
// runner id and in-memory state. (Package trees live in the data dir, so
// servers on other hosts see another machine's community packages only
// after adding them there.)
func (b *bundle) peer(ms agent.Missions) *agent.Service {
	b.t.Helper()
	if ms == nil {
		ms = b.ms
	}
	return b.service(b.db.Store, ms)
}

// service starts an agent service over st and ms on b's workspace root
// and data dir, stopped when the test ends.
func (b *bundle) service(st store.Store, ms agent.Missions) *agent.Service {
	b.t.Helper()
	svc, _ := b.launch(st, ms, nil)
	return svc
}

// gatedMissions holds the calls of one kind (gated: "project" for
// CreateProject, "mission" for CreateMission and CreateMissionOnce) until
// gate is closed, telling entered when such a call arrives.
type gatedMissions struct {
	agent.Missions
	gated   string
	entered chan struct{}
	gate    chan struct{}
}

func (g gatedMissions) hold(kind string) {
	if kind == g.gated {
		g.entered <- struct{}{}
		<-g.gate
	}
}

func (g gatedMissions) CreateProject(ctx context.Context, a mission.Actor, r mission.CreateProjectRequest) (mission.Project, error) {
	g.hold("project")
	return g.Missions.CreateProject(ctx, a, r)
}

func (g gatedMissions) CreateMission(ctx context.Context, a mission.Actor, r mission.CreateRequest) (mission.Mission, error) {
	g.hold("mission")
	return g.Missions.CreateMission(ctx, a, r)
}

func (g gatedMissions) CreateMissionOnce(ctx context.Context, a mission.Actor, key string, r mission.CreateRequest) (mission.Mission, bool, error) {
	g.hold("mission")
	return g.Missions.CreateMissionOnce(ctx, a, key, r)
}

// TestWorkspaceAcrossServers: two services on one database (two servers)
// compete for one existing workspace. The first holds it (its project
// registration is held open); the second's operation ends
// WORKSPACE_IN_USE, not a storage or project error; the first becomes
// ready with the one agent.
func TestWorkspaceAcrossServers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		b.pkg(fixture{id: "fix/two", doctor: okDoctor}, true)
		repo := filepath.Join(b.root, "repo")
		gitInit(t, repo)
		g := gatedMissions{Missions: b.ms, gated: "project", entered: make(chan struct{}, 1), gate: make(chan struct{})}
		first := b.peer(g)
		released := false
		t.Cleanup(func() {
			if !released {
				close(g.gate)
			}
		})
		ctx := context.Background()
		ws := agent.Workspace{Kind: "existing", Path: repo}
		ra, err := first.Prepare(ctx, agent.OwnerIdentity, agent.PrepareRequest{MachineID: first.MachineID(), PackageID: "fix/two", IdempotencyKey: "x-1", Workspace: ws})
		if err != nil {
			t.Fatal(err)
		}
		<-g.entered // the first holds the workspace's claim
		rb := b.mustPrepare("x-2", "fix/two", ws)
		ob := b.settled(rb.OperationID)
		if ob.State != agent.StateFailed || ob.Error == nil || ob.Error.Code != agent.CodeWorkspaceInUse || ob.AgentID != nil {
			t.Fatalf("the competing operation: %s", js(ob))
		}
		close(g.gate)
		released = true
		var oa agent.Operation
		waitFor(t, 30e9, "the first to be ready", func() bool {
			oa, _ = first.Operation(ctx, agent.OwnerIdentity, ra.Operation.OperationID)
			return oa.State != agent.StateAccepted && oa.State != agent.StateRunning
		}, func() string { return js(oa) })
		if oa.State != agent.StateReady || oa.AgentID == nil {
			t.Fatalf("the first operation: %s", js(oa))
		}
		if ags, err := b.svc.ListAgents(ctx, "", 0); err != nil || len(ags) != 1 {
			t.Fatalf("agents = %s, %v", js(ags), err)
		}
	})
}

// TestRevocationDurable: a revocation is kept in the database. Another
// server's running preparation stops at its next boundary; the identity's
// prepare and turn.send are refused REVOKED by the other server and after
// a restart of the one that revoked.
func TestRevocationDurable(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		ctx := context.Background()
		b.pkg(fixture{id: "fix/ok", doctor: okDoctor}, true)
		b.pkg(fixture{id: "fix/slow", setup: blockSetup, doctor: okDoctor}, true)
		ready := b.settled(b.mustPrepare("r-0", "fix/ok", agent.Workspace{Kind: "new", Name: "ok"}).OperationID)
		if ready.AgentID == nil {
			t.Fatalf("no agent: %s", js(ready))
		}
		other := b.peer(nil)
		res, err := other.Prepare(ctx, "device:d1", agent.PrepareRequest{MachineID: other.MachineID(), PackageID: "fix/slow", IdempotencyKey: "r-1", Workspace: agent.Workspace{Kind: "new", Name: "slow"}})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30e9, "setup", func() bool { return b.lines("fix/slow") == 1 }, func() string { return "" })
		if err := b.svc.Revoke(ctx, "device:d1"); err != nil {
			t.Fatal(err)
		}
		b.release("fix/slow")
		var o agent.Operation
		waitFor(t, 30e9, "the other server's operation to stop", func() bool {
			o, _ = other.Operation(ctx, "device:d1", res.Operation.OperationID)
			return o.State != agent.StateAccepted && o.State != agent.StateRunning
		}, func() string { return js(o) })
		if o.Error == nil || o.Error.Code != agent.CodeRevoked || o.AgentID != nil {
			t.Fatalf("the other server's operation: %s", js(o))
		}
		refused := func(svc *agent.Service, who string) {
			t.Helper()
			_, err := svc.Prepare(ctx, "device:d1", agent.PrepareRequest{MachineID: svc.MachineID(), PackageID: "fix/ok", IdempotencyKey: "r-2", Workspace: agent.Workspace{Kind: "new"}})
			if code(err) != agent.CodeRevoked {
				t.Errorf("%s: prepare: %v, want REVOKED", who, err)
			}
			_, err = svc.SendTurn(ctx, "device:d1", agent.TurnSendRequest{MachineID: svc.MachineID(), AgentID: *ready.AgentID, IdempotencyKey: "t-1", Text: "do it"})
			if code(err) != agent.CodeRevoked {
				t.Errorf("%s: turn.send: %v, want REVOKED", who, err)
			}
		}
		refused(other, "the other server")
		b.stop()
		b.svc.Wait()
		b.start(nil)
		refused(b.svc, "after a restart")
		// Another identity is unaffected.
		if _, err := b.prepare("device:d2", "r-3", "fix/ok", agent.Workspace{Kind: "new", Name: "d2"}); err != nil {
			t.Fatalf("another device: %v", err)
		}
		b.svc.Wait()
	})
}
