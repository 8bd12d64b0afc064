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
	"github.com/aos-run/aos/internal/store/storetest"
)

const countSetup = "echo setup >> $COUNT\n"
const blockSetup = "echo setup >> $COUNT\ncat $FIFO >/dev/null\n"
const okDoctor = "echo tools fine\n"

// TestPrepareIdempotency: the same key and parameters answer duplicate
// with the same operation (a new request, nothing run twice); changed
// parameters are IDEMPOTENCY_CONFLICT; keys are scoped by identity, and
// another identity's operation is OPERATION_NOT_FOUND.
func TestPrepareIdempotency(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		b.pkg(fixture{id: "fix/idem", setup: countSetup, doctor: okDoctor}, true)
		ws := agent.Workspace{Kind: agent.WorkspaceNew, Name: "idem"}
		op := b.mustPrepare("prepare-001", "fix/idem", ws)
		if len(op.OperationID) != 64 {
			t.Fatalf("operation id %q", op.OperationID)
		}
		again, err := b.prepare(agent.OwnerIdentity, "prepare-001", "fix/idem", ws)
		if err != nil || again.Status != agent.StatusDuplicate || again.Operation.OperationID != op.OperationID {
			t.Fatalf("retry = %+v, %v; want duplicate of %s", again, err, op.OperationID)
		}
		_, err = b.prepare(agent.OwnerIdentity, "prepare-001", "fix/idem", agent.Workspace{Kind: agent.WorkspaceNew, Name: "other"})
		if code(err) != agent.CodeIdempotencyConflict {
			t.Fatalf("changed workspace under the same key: %v", err)
		}
		done := b.settled(op.OperationID)
		if done.State != agent.StateReady || done.Phase != agent.PhaseComplete || done.AgentID == nil || done.TaskDispatched {
			t.Fatalf("settled = %s", js(done))
		}
		if again, err := b.prepare(agent.OwnerIdentity, "prepare-001", "fix/idem", ws); err != nil || again.Status != agent.StatusDuplicate || again.Operation.State != agent.StateReady {
			t.Fatalf("retry after ready = %+v, %v", again, err)
		}
		if n := b.lines("fix/idem"); n != 1 {
			t.Fatalf("setup ran %d times", n)
		}
		if _, err := b.svc.Operation(context.Background(), "device:other", op.OperationID); code(err) != agent.CodeOperationNotFound {
			t.Fatalf("another identity's operation: %v", err)
		}
		// The same key under another identity is another intent.
		res, err := b.prepare("device:other", "prepare-001", "fix/idem", agent.Workspace{Kind: agent.WorkspaceNew, Name: "idem2"})
		if err != nil || res.Status != agent.StatusAccepted || res.Operation.OperationID == op.OperationID {
			t.Fatalf("other identity = %+v, %v", res, err)
		}
		b.svc.Wait()
	})
}

// TestPrepareRequestErrors: errors before reservation carry no operation
// and reserve nothing.
func TestPrepareRequestErrors(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		b.pkg(fixture{id: "fix/err", doctor: okDoctor}, true)
		b.pkg(fixture{id: "fix/viewer", isViewer: true}, true)
		outside := t.TempDir()
		long := "/" + strings.Repeat("a", 4096)
		ctx := context.Background()
		for _, tc := range []struct {
			name string
			r    agent.PrepareRequest
			want string
		}{
			{"machine", agent.PrepareRequest{MachineID: "elsewhere", PackageID: "fix/err", IdempotencyKey: "k", Workspace: agent.Workspace{Kind: "new"}}, agent.CodeMachineMismatch},
			{"key chars", agent.PrepareRequest{PackageID: "fix/err", IdempotencyKey: "a b", Workspace: agent.Workspace{Kind: "new"}}, agent.CodeInvalidRequest},
			{"key long", agent.PrepareRequest{PackageID: "fix/err", IdempotencyKey: strings.Repeat("k", 65), Workspace: agent.Workspace{Kind: "new"}}, agent.CodeInvalidRequest},
			{"no workspace", agent.PrepareRequest{PackageID: "fix/err", IdempotencyKey: "k"}, agent.CodeInvalidRequest},
			{"both", agent.PrepareRequest{PackageID: "fix/err", IdempotencyKey: "k", Workspace: agent.Workspace{Kind: "new", Path: "/x"}}, agent.CodeInvalidRequest},
			{"name", agent.PrepareRequest{PackageID: "fix/err", IdempotencyKey: "k", Workspace: agent.Workspace{Kind: "new", Name: "-x"}}, agent.CodeInvalidWorkspace},
			{"name long", agent.PrepareRequest{PackageID: "fix/err", IdempotencyKey: "k", Workspace: agent.Workspace{Kind: "new", Name: strings.Repeat("n", 101)}}, agent.CodeInvalidWorkspace},
			{"relative", agent.PrepareRequest{PackageID: "fix/err", IdempotencyKey: "k", Workspace: agent.Workspace{Kind: "existing", Path: "rel"}}, agent.CodeInvalidWorkspace},
			{"control", agent.PrepareRequest{PackageID: "fix/err", IdempotencyKey: "k", Workspace: agent.Workspace{Kind: "existing", Path: b.root + "/a\nb"}}, agent.CodeInvalidWorkspace},
			{"too long", agent.PrepareRequest{PackageID: "fix/err", IdempotencyKey: "k", Workspace: agent.Workspace{Kind: "existing", Path: long}}, agent.CodeInvalidWorkspace},
			{"outside root", agent.PrepareRequest{PackageID: "fix/err", IdempotencyKey: "k", Workspace: agent.Workspace{Kind: "existing", Path: outside}}, agent.CodeInvalidWorkspace},
			{"root itself", agent.PrepareRequest{PackageID: "fix/err", IdempotencyKey: "k", Workspace: agent.Workspace{Kind: "existing", Path: b.root}}, agent.CodeInvalidWorkspace},
			{"missing", agent.PrepareRequest{PackageID: "fix/err", IdempotencyKey: "k", Workspace: agent.Workspace{Kind: "existing", Path: b.root + "/none"}}, agent.CodeInvalidWorkspace},
			{"unknown package", agent.PrepareRequest{PackageID: "fix/none", IdempotencyKey: "k", Workspace: agent.Workspace{Kind: "new"}}, agent.CodePackageNotFound},
			{"viewer", agent.PrepareRequest{PackageID: "fix/viewer", IdempotencyKey: "k", Workspace: agent.Workspace{Kind: "new"}}, agent.CodeInvalidRequest},
		} {
			if tc.r.MachineID == "" {
				tc.r.MachineID = b.svc.MachineID()
			}
			res, err := b.svc.Prepare(ctx, agent.OwnerIdentity, tc.r)
			if code(err) != tc.want || res.Operation.OperationID != "" {
				t.Errorf("%s: %+v, %v; want %s and no operation", tc.name, res, err, tc.want)
			}
		}
		// Nothing was reserved: the key is still free.
		if _, err := b.prepare(agent.OwnerIdentity, "k", "fix/err", agent.Workspace{Kind: "new", Name: "fine"}); err != nil {
			t.Fatalf("first use of the key after refusals: %v", err)
		}
		b.svc.Wait()
	})
}

// TestInstallCoalescing: four concurrent preparations of one package share
// one install: its setup runs once while all four wait on it.
func TestInstallCoalescing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		b.pkg(fixture{id: "fix/shared", setup: blockSetup, doctor: okDoctor}, true)
		var wg sync.WaitGroup
		ids := make([]string, 4)
		for i := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := b.prepare(agent.OwnerIdentity, "co-"+string(rune('a'+i)), "fix/shared", agent.Workspace{Kind: "new", Name: "co-" + string(rune('a'+i))})
				if err != nil {
					t.Error(err)
					return
				}
				ids[i] = res.Operation.OperationID
			}()
		}
		wg.Wait()
		waitFor(t, 30e9, "the four operations to wait on one install", func() bool {
			if b.lines("fix/shared") != 1 {
				return false
			}
			for _, id := range ids {
				if o := b.op(id); o.Phase != agent.PhaseInstall && o.Phase != agent.PhaseSetup {
					return false
				}
			}
			return true
		}, func() string { return js(b.op(ids[0])) })
		b.release("fix/shared")
		for _, id := range ids {
			if o := b.settled(id); o.State != agent.StateReady {
				t.Errorf("operation %s = %s", id, js(o))
			}
		}
		if n := b.lines("fix/shared"); n != 1 {
			t.Fatalf("setup ran %d times for 4 concurrent preparations", n)
		}
	})
}

// TestJobLimit: at most four preparations run at once; a fifth stays
// accepted until a slot frees.
func TestJobLimit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		var ids []string
		for i := range 5 {
			id := "fix/job" + string(rune('a'+i))
			b.pkg(fixture{id: id, setup: blockSetup, doctor: okDoctor}, true)
			ids = append(ids, b.mustPrepare("job-"+string(rune('a'+i)), id, agent.Workspace{Kind: "new"}).OperationID)
		}
		started := func() (n int, idle string) {
			for i := range 5 {
				if b.lines("fix/job"+string(rune('a'+i))) > 0 {
					n++
				} else {
					idle = "fix/job" + string(rune('a'+i))
				}
			}
			return n, idle
		}
		waitFor(t, 30e9, "four setups to run", func() bool { n, _ := started(); return n == 4 }, func() string { n, _ := started(); return js(n) })
		_, idle := started()
		idleOp := ids[idle[len(idle)-1]-'a']
		// A negative needs a window: for one second, the fifth must stay
		// accepted and no fifth setup may start.
		for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
			if o := b.op(idleOp); o.State != agent.StateAccepted || o.Phase != agent.PhaseAccepted {
				t.Fatalf("the fifth operation while four run: %s", js(o))
			}
			if n, _ := started(); n != 4 {
				t.Fatalf("%d setups run at once", n)
			}
		}
		for i := range 5 {
			if id := "fix/job" + string(rune('a'+i)); id != idle {
				b.release(id)
				break
			}
		}
		waitFor(t, 30e9, "the fifth setup to start after a slot freed", func() bool { return b.lines(idle) == 1 }, func() string { return js(b.op(idleOp)) })
		for i := range 5 {
			if o := b.op(ids[i]); o.Phase == agent.PhaseSetup || o.Phase == agent.PhaseInstall {
				b.release("fix/job" + string(rune('a'+i)))
			}
		}
		for _, id := range ids {
			if o := b.settled(id); o.State != agent.StateReady {
				t.Errorf("%s", js(o))
			}
		}
	})
}

// TestWorkspaceCollisions: a workspace another agent has is refused, also
// through a symbolic link; a named new folder that exists is never reused;
// two preparations racing for one existing workspace create one agent.
func TestWorkspaceCollisions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		b.pkg(fixture{id: "fix/ws", doctor: okDoctor, setup: blockSetup}, true)
		repo := filepath.Join(b.root, "repo")
		gitInit(t, repo)
		// Two racing preparations of one existing workspace (through a
		// link for one of them): both wait on the shared install, then
		// exactly one gets the workspace.
		link := filepath.Join(b.root, "link")
		if err := os.Symlink(repo, link); err != nil {
			t.Fatal(err)
		}
		a := b.mustPrepare("ws-a", "fix/ws", agent.Workspace{Kind: "existing", Path: repo})
		c := b.mustPrepare("ws-b", "fix/ws", agent.Workspace{Kind: "existing", Path: link})
		waitFor(t, 30e9, "setup", func() bool { return b.lines("fix/ws") == 1 }, func() string { return js(b.op(a.OperationID)) })
		b.release("fix/ws")
		oa, oc := b.settled(a.OperationID), b.settled(c.OperationID)
		ready, refused := oa, oc
		if oa.State != agent.StateReady {
			ready, refused = oc, oa
		}
		if ready.State != agent.StateReady || refused.State != agent.StateFailed || refused.Error == nil || refused.Error.Code != agent.CodeWorkspaceInUse || refused.AgentID != nil {
			t.Fatalf("racing preparations: %s and %s", js(oa), js(oc))
		}
		real, _ := filepath.EvalSymlinks(repo)
		if *ready.Workspace != real {
			t.Fatalf("workspace %s, want the canonical %s", *ready.Workspace, real)
		}
		// Later requests are refused before any reservation.
		for _, p := range []string{repo, link, repo + "/"} {
			if _, err := b.prepare(agent.OwnerIdentity, "ws-c", "fix/ws", agent.Workspace{Kind: "existing", Path: p}); code(err) != agent.CodeWorkspaceInUse {
				t.Errorf("existing %s: %v, want WORKSPACE_IN_USE", p, err)
			}
		}
		// A link that leaves the root is not confined.
		out := t.TempDir()
		if err := os.Symlink(out, filepath.Join(b.root, "escape")); err != nil {
			t.Fatal(err)
		}
		if _, err := b.prepare(agent.OwnerIdentity, "ws-d", "fix/ws", agent.Workspace{Kind: "existing", Path: filepath.Join(b.root, "escape")}); code(err) != agent.CodeInvalidWorkspace {
			t.Errorf("link out of the root: %v", err)
		}
		// An existing folder named for a new workspace is not reused.
		if err := os.Mkdir(filepath.Join(b.root, "taken"), 0o755); err != nil {
			t.Fatal(err)
		}
		o := b.settled(b.mustPrepare("ws-e", "fix/ws", agent.Workspace{Kind: "new", Name: "taken"}).OperationID)
		if o.State != agent.StateFailed || o.Error.Code != agent.CodeInvalidWorkspace || o.AgentID != nil {
			t.Fatalf("new workspace over an existing folder: %s", js(o))
		}
		if ents, _ := os.ReadDir(filepath.Join(b.root, "taken")); len(ents) != 0 {
			t.Fatalf("the existing folder was written: %v", ents)
		}
		ags, err := b.svc.ListAgents(context.Background(), "", 0)
		if err != nil || len(ags) != 1 {
			t.Fatalf("agents = %s, %v", js(ags), err)
		}
	})
}

// TestBrokenInstall: a failing setup leaves the package broken with its
// output as evidence; a broken install is never overwritten or retried.
func TestBrokenInstall(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		b.pkg(fixture{id: "fix/broken", setup: "echo setup >> $COUNT\necho 'libfoo: missing' >&2\nexit 3\n", doctor: okDoctor}, true)
		o := b.settled(b.mustPrepare("br-1", "fix/broken", agent.Workspace{Kind: "new"}).OperationID)
		if o.State != agent.StateNeedsUserAction || o.Error.Code != agent.CodeSetupFailed || !strings.Contains(strings.Join(o.Doctor, "\n"), "libfoo: missing") || o.AgentID != nil {
			t.Fatalf("failed setup: %s", js(o))
		}
		insp, err := b.svc.StoreInspect(context.Background(), agent.OwnerIdentity, "fix/broken")
		if err != nil || insp.Package.Installation != agent.InstallBroken || insp.Package.Broken == nil || insp.Package.Installed {
			t.Fatalf("inspect broken = %s, %v", js(insp), err)
		}
		if _, err := b.prepare(agent.OwnerIdentity, "br-2", "fix/broken", agent.Workspace{Kind: "new"}); code(err) != agent.CodePackageBroken {
			t.Fatalf("prepare a broken package: %v", err)
		}
		if n := b.lines("fix/broken"); n != 1 {
			t.Fatalf("setup ran %d times", n)
		}
	})
}

// TestReviewRequired: an unreviewed community package, or a reviewed one
// whose viewer dependency is unreviewed, is never installed silently.
func TestReviewRequired(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		b.pkg(fixture{id: "fix/unrev", setup: countSetup}, false)
		b.pkg(fixture{id: "fix/view", isViewer: true, setup: countSetup, doctor: okDoctor}, false)
		b.pkg(fixture{id: "fix/uses-view", viewer: "fix/view", setup: countSetup, doctor: okDoctor}, true)
		ls, err := b.svc.StoreList(context.Background(), agent.OwnerIdentity, agent.StoreListRequest{Query: "fix"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ls.Packages {
			if p.PackageID == "fix/view" {
				t.Fatalf("a viewer package is listed as an agent entry")
			}
			if p.PackageID == "fix/unrev" && (p.InstallAllowed || p.Verified || p.Catalog) {
				t.Fatalf("unreviewed package %s", js(p))
			}
		}
		if _, err := b.prepare(agent.OwnerIdentity, "rv-1", "fix/unrev", agent.Workspace{Kind: "new"}); code(err) != agent.CodePackageReviewRequired {
			t.Fatalf("unreviewed package: %v", err)
		}
		o := b.settled(b.mustPrepare("rv-2", "fix/uses-view", agent.Workspace{Kind: "new"}).OperationID)
		if o.State != agent.StateNeedsUserAction || o.Error.Code != agent.CodePackageReviewRequired || o.Guidance == nil || !strings.Contains(*o.Guidance, "fix/view") {
			t.Fatalf("unreviewed dependency: %s", js(o))
		}
		if b.lines("fix/unrev")+b.lines("fix/view")+b.lines("fix/uses-view") != 0 {
			t.Fatal("a setup ran for an unreviewed package or dependency")
		}
		if _, err := b.svc.ReviewPackage(context.Background(), "fix/view"); err != nil {
			t.Fatal(err)
		}
		o = b.settled(b.mustPrepare("rv-3", "fix/uses-view", agent.Workspace{Kind: "new"}).OperationID)
		if o.State != agent.StateReady || len(o.Doctor) != 2 || !strings.HasPrefix(o.Doctor[0], "fix/view: ") {
			t.Fatalf("after review: %s", js(o))
		}
		if b.lines("fix/view") != 1 || b.lines("fix/uses-view") != 1 {
			t.Fatal("setups after review")
		}
	})
}

// TestRevokeStopsAtNextBoundary: revoking an identity while its setup runs
// lets the setup finish (it cannot be undone) and stops before the doctor;
// nothing is deleted, and its new requests are refused.
func TestRevokeStopsAtNextBoundary(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		b.pkg(fixture{id: "fix/rev", setup: blockSetup, doctor: "echo doctor >> $COUNT\n"}, true)
		res, err := b.prepare("device:d1", "rev-1", "fix/rev", agent.Workspace{Kind: "new", Name: "rev"})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30e9, "setup", func() bool { return b.lines("fix/rev") == 1 }, func() string { return "" })
		if err := b.svc.Revoke(context.Background(), "device:d1"); err != nil {
			t.Fatal(err)
		}
		b.release("fix/rev")
		var o agent.Operation
		waitFor(t, 30e9, "revoked", func() bool {
			o, _ = b.svc.Operation(context.Background(), "device:d1", res.Operation.OperationID)
			return o.State == agent.StateNeedsUserAction
		}, func() string { return js(o) })
		if o.Error.Code != agent.CodeRevoked || o.AgentID != nil || b.lines("fix/rev") != 1 {
			t.Fatalf("after revoke: %s, count %d", js(o), b.lines("fix/rev"))
		}
		if _, err := os.Stat(filepath.Join(b.root, "rev")); err == nil {
			t.Fatal("the workspace was made after revocation")
		}
		if _, err := b.prepare("device:d1", "rev-2", "fix/rev", agent.Workspace{Kind: "new"}); code(err) != agent.CodeRevoked {
			t.Fatalf("new request after revoke: %v", err)
		}
		insp, _ := b.svc.StoreInspect(context.Background(), agent.OwnerIdentity, "fix/rev")
		if !insp.Package.Installed {
			t.Fatalf("the install finished before revocation is kept: %s", js(insp.Package))
		}
	})
}
