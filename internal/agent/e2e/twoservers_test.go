package e2e

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

// TestTwoServersOneDatabase: two real aos server processes on one
// PostgreSQL database. A runs a preparation whose setup waits on a fifo; B
// starts (its start-up recovery) and makes a dozen recovery passes without
// touching it; released, A finishes it to ready. Then B is SIGKILLed in a
// second preparation's setup: A marks that operation needs_user_action /
// RECOVERY_REQUIRED once B's lease has run out, and nothing is replayed
// (the setup ran once, no workspace was made).
//
// A, whose operation must be left alone while it lives, has the default
// lease (15 s, renewed every 5 s): a renewal late by 2/3 of a short lease
// would let B recover it, rightly. B, whose operation is to be recovered,
// has a short one (shortLease, 1 s), so that its recovery passes (every
// 1/3 s) are many and its death is noticed soon; a late renewal of its own
// only lets A recover its operation earlier, with the same outcome.
func TestTwoServersOneDatabase(t *testing.T) {
	t.Parallel()
	if os.Getenv("AOS_TEST_POSTGRES_URL") == "" {
		t.Skip("AOS_TEST_POSTGRES_URL unset")
	}
	a := newMachine(t, "postgres")
	for _, id := range []string{"one", "two"} {
		dir := filepath.Join(a.pkgs, id)
		_ = os.MkdirAll(dir, 0o755)
		count, fifo := filepath.Join(a.pkgs, id+".count"), filepath.Join(a.pkgs, id+".fifo")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		mustWrite(t, filepath.Join(dir, "aos-package.json"), `{"packageId":"fix/`+id+`","name":"Slow `+id+`","description":"blocks in setup","category":"test","engine":"builtin","viewerPackageId":null,"version":"1","setup":"setup.sh"}`)
		mustWrite(t, filepath.Join(dir, "setup.sh"), "echo setup >> "+count+"\ncat "+fifo+" >/dev/null\n")
		a.aos(nil, "package", "add", dir)
		a.aos(nil, "package", "review", "fix/"+id)
	}
	model := "ANTHROPIC_BASE_URL=" + scripttest.Start(t, "name: test\nturns:\n  - text: ok\n").URL()
	a.start(model)
	var ls agent.StoreListResult
	a.call("GET", "/store/packages?query=slow", nil, &ls)
	prepare := func(m *machine, pkg, key, ws string) string {
		t.Helper()
		req := agent.PrepareRequest{MachineID: ls.MachineID, PackageID: pkg, IdempotencyKey: key, Workspace: agent.Workspace{Kind: "new", Name: ws}}
		var res agent.PrepareResult
		if st := m.call("POST", "/agents/prepare", req, &res); st != 200 || res.Status != "accepted" {
			t.Fatalf("prepare %s: %d %s", pkg, st, js(res))
		}
		return res.Operation.OperationID
	}
	op1 := prepare(a, "fix/one", "two-1", "one")
	count1 := filepath.Join(a.pkgs, "one.count")
	waitFor(t, 30*time.Second, "A's setup to block", func() bool { return countLines(count1) == 1 }, func() string { return js(a.op(op1)) })

	// B starts on the same database and data: it must leave A's running
	// operation alone, at start and in its periodic recovery.
	b := &machine{t: t, bin: a.bin, env: a.env, token: a.token, root: a.root, pkgs: a.pkgs}
	b.start(shortLease, model)
	watchUntil := time.Now().Add(4 * time.Second)
	for time.Now().Before(watchUntil) {
		if o := b.op(op1); o.State != agent.StateRunning || o.Phase != agent.PhaseSetup {
			t.Fatalf("B touched A's live operation: %s", js(o))
		}
		time.Sleep(100 * time.Millisecond)
	}
	release(t, filepath.Join(a.pkgs, "one.fifo"))
	var o agent.Operation
	waitFor(t, 60*time.Second, "A to finish its operation", func() bool {
		o = b.op(op1)
		return o.State == agent.StateReady
	}, func() string { return js(o) })
	if o.AgentID == nil || countLines(count1) != 1 {
		t.Fatalf("A's operation: %s, setup ran %d times", js(o), countLines(count1))
	}

	// B dies in a second preparation's setup: A recovers it, after B's
	// lease (1 s) at its next recovery pass (every 5 s).
	op2 := prepare(b, "fix/two", "two-2", "two")
	count2 := filepath.Join(a.pkgs, "two.count")
	waitFor(t, 30*time.Second, "B's setup to block", func() bool { return countLines(count2) == 1 }, func() string { return js(b.op(op2)) })
	b.kill()
	killed := time.Now()
	release(t, filepath.Join(a.pkgs, "two.fifo")) // the orphaned setup ends: a replay would show as a second line
	waitFor(t, 30*time.Second, "A to recover B's operation", func() bool {
		o = a.op(op2)
		return o.State != agent.StateRunning
	}, func() string { return js(o) })
	t.Logf("A recovered B's operation %v after B's SIGKILL (B's lease 1 s, A's recovery every %v)", time.Since(killed).Round(10*time.Millisecond), agent.DefaultLease/3)
	if o.State != agent.StateNeedsUserAction || o.Error == nil || o.Error.Code != agent.CodeRecoveryRequired || o.AgentID != nil {
		t.Fatalf("recovered by A: %s", js(o))
	}
	var p agent.StoreInspectResult
	waitFor(t, 30*time.Second, "the interrupted install to be broken", func() bool {
		a.call("GET", "/store/packages/fix/two", nil, &p)
		return p.Package.Installation == agent.InstallBroken
	}, func() string { return js(p.Package) })
	if _, err := os.Stat(filepath.Join(a.root, "two")); err == nil {
		t.Fatal("a workspace was made")
	}
	if n := countLines(count2); n != 1 {
		t.Fatalf("setup ran %d times", n)
	}
}
