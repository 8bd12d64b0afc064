package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/worker"
)

// runWorker runs a real kernel worker with the builtin engine, the real
// sandbox and the scripted model server.
func (b *bundle) runWorker() {
	b.t.Helper()
	dataDir := b.t.TempDir()
	sb, err := sandbox.New(sandbox.Config{DataDir: dataDir})
	if err != nil {
		b.t.Fatal(err)
	}
	deps := worker.EngineDeps(b.k, dataDir, sb, worker.AdapterFunc(b.model.URL(), func(k string) string { return b.env[k] }))
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = b.k.RunWorker(ctx, kernel.WorkerConfig{Concurrency: 1, Logics: map[string]kernel.Logic{engine.LogicName: engine.AgentLogic(deps)}, JanitorEvery: 50 * time.Millisecond})
	}()
	b.t.Cleanup(func() { stop(); wg.Wait() })
}

// TestOwnerFlow is seed 000's flow with an official package: list →
// inspect → prepare → poll → ready → send → the mission runs on the
// scripted model → receipt; a repeated send is the same receipt, a changed
// one is IDEMPOTENCY_CONFLICT.
func TestOwnerFlow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		b.runWorker()
		ctx := context.Background()
		owner := agent.OwnerIdentity

		ls, err := b.svc.StoreList(ctx, owner, agent.StoreListRequest{Query: "markdown docs"})
		if err != nil || len(ls.Packages) != 1 || ls.Packages[0].PackageID != "aos/docs-writer" || ls.NextOffset != nil || ls.MachineID != b.svc.MachineID() {
			t.Fatalf("store.list = %s, %v", js(ls), err)
		}
		p := ls.Packages[0]
		if !p.Catalog || p.Installed || !p.Verified || !p.InstallAllowed || p.Installation != agent.InstallNotInstalled || p.Readiness.State != agent.ReadinessNotInstalled || p.Capabilities.Source != "package_metadata" {
			t.Fatalf("package before install = %s", js(p))
		}
		insp, err := b.svc.StoreInspect(ctx, owner, "aos/docs-writer")
		if err != nil || len(insp.Candidates) != 0 || insp.CandidatesTruncated {
			t.Fatalf("store.inspect = %s, %v", js(insp), err)
		}

		start := time.Now()
		op := b.mustPrepare("prepare-docs-001", "aos/docs-writer", agent.Workspace{Kind: agent.WorkspaceNew, Name: "handbook"})
		accepted := time.Since(start)
		done := b.settled(op.OperationID)
		t.Logf("prepare answered in %s, ready after %s (install, doctor, workspace, create, launch check)", accepted, time.Since(start))
		if done.State != agent.StateReady || done.AgentID == nil || done.Workspace == nil || done.Error != nil || len(done.Doctor) == 0 || !strings.Contains(done.Doctor[0], "git version") {
			t.Fatalf("operation = %s", js(done))
		}
		ws := *done.Workspace
		for _, f := range []string{"AGENTS.md", "docs/index.md"} {
			if _, err := os.Stat(filepath.Join(ws, f)); err != nil {
				t.Fatalf("workspace lacks %s: %v", f, err)
			}
		}
		insp, _ = b.svc.StoreInspect(ctx, owner, "aos/docs-writer")
		if len(insp.Candidates) != 1 || insp.Candidates[0].AgentID != *done.AgentID || insp.Candidates[0].Runtime != agent.RuntimeReady ||
			!insp.Package.Installed || insp.Package.Readiness.State != agent.ReadinessPassed || insp.Package.Readiness.CheckedAt == nil || insp.Package.LastPreparation == nil {
			t.Fatalf("inspect after prepare = %s", js(insp))
		}

		send := agent.TurnSendRequest{MachineID: b.svc.MachineID(), AgentID: *done.AgentID, IdempotencyKey: "task-docs-001", Text: "Write a page about backups."}
		rc, err := b.svc.SendTurn(ctx, owner, send)
		if err != nil || rc.State != agent.ReceiptAccepted || rc.MissionID == "" || rc.Duplicate {
			t.Fatalf("send = %s, %v", js(rc), err)
		}
		again, err := b.svc.SendTurn(ctx, owner, send)
		if err != nil || again.ReceiptID != rc.ReceiptID || again.MissionID != rc.MissionID || !again.Duplicate {
			t.Fatalf("repeated send = %s, %v", js(again), err)
		}
		changed := send
		changed.Text = "Something else."
		if _, err := b.svc.SendTurn(ctx, owner, changed); code(err) != agent.CodeIdempotencyConflict {
			t.Fatalf("changed text under the same key: %v", err)
		}
		if rc.MissionStatus == "" {
			t.Fatalf("the receipt has no mission status: %s", js(rc))
		}
		// The identity watches the mission finish through receipt.get
		// alone; the status is the mission service's.
		var watched agent.Receipt
		waitFor(t, 60*time.Second, "the receipt to show the mission's end", func() bool {
			watched, err = b.svc.Receipt(ctx, owner, rc.ReceiptID)
			return err == nil && watched.MissionStatus == kernel.StatusPartial
		}, func() string { return js(watched) })
		m, err := b.ms.GetMission(ctx, rc.MissionID)
		if err != nil || m.Status != watched.MissionStatus {
			t.Fatalf("mission %s, %v; the receipt said %s", js(m), err, watched.MissionStatus)
		}
		ms, _ := b.ms.ListMissions(ctx, mission.ListMissionsRequest{})
		if len(ms) != 1 {
			t.Fatalf("%d missions for one task sent twice", len(ms))
		}
		got, err := b.svc.Receipt(ctx, owner, rc.ReceiptID)
		if err != nil || got.MissionID != m.ID {
			t.Fatalf("receipt.get = %s, %v", js(got), err)
		}
		if _, err := b.svc.Receipt(ctx, "device:x", rc.ReceiptID); code(err) != agent.CodeReceiptNotFound {
			t.Fatalf("another identity's receipt: %v", err)
		}
		// The mission got the package's criteria, and the model saw the
		// package's instructions (the committed AGENTS.md).
		var sawInstructions bool
		for _, r := range b.model.Requests() {
			sawInstructions = sawInstructions || strings.Contains(string(r.Body), "Docs writer")
			if strings.Contains(string(r.Body), "sk-ant-canary-secret") {
				t.Fatal("a secret reached the model's request body")
			}
		}
		if !sawInstructions || !strings.Contains(string(m.Spec), "every Markdown link") {
			t.Fatalf("instructions seen %v; spec %s", sawInstructions, m.Spec)
		}
	})
}

// TestEngineActionRequired: without a usable model the operation needs
// action (the agent exists, no duplicate is created); once the model is
// usable, polling the same operation makes it ready.
func TestEngineActionRequired(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db, setupOpts{noModel: true})
		b.pkg(fixture{id: "fix/eng", doctor: okDoctor}, true)
		o := b.settled(b.mustPrepare("eng-1", "fix/eng", agent.Workspace{Kind: "new"}).OperationID)
		if o.State != agent.StateNeedsUserAction || o.Error.Code != agent.CodeEngineActionRequired || o.AgentID == nil || o.Phase != agent.PhaseLaunch {
			t.Fatalf("no model: %s", js(o))
		}
		ag, _ := b.svc.ListAgents(context.Background(), "", 0)
		if len(ag) != 1 || ag[0].Runtime == agent.RuntimeReady {
			t.Fatalf("agents = %s", js(ag))
		}
		// The model becomes usable: the same operation becomes ready.
		srv := scriptServer(t)
		b.env["ANTHROPIC_BASE_URL"] = srv
		// Polling re-checks the engine at most every few seconds.
		var o2 agent.Operation
		waitFor(t, 30*time.Second, "ready after the engine is usable", func() bool {
			o2 = b.op(o.OperationID)
			return o2.State == agent.StateReady
		}, func() string { return js(o2) })
		if *o2.AgentID != *o.AgentID {
			t.Fatalf("after the engine is usable: %s", js(o2))
		}
		if ag, _ := b.svc.ListAgents(context.Background(), "", 0); len(ag) != 1 || ag[0].Runtime != agent.RuntimeReady {
			t.Fatalf("agents after = %s", js(ag))
		}
	})
}
