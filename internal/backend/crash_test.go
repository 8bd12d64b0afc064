package backend_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storeopen"
	"github.com/aos-run/aos/internal/store/storetest"
)

// childWorker runs a worker with the backend logic on AOS_TEST_DSN until
// SIGTERM (or its SIGKILL by the test).
func childWorker() int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	st, err := storeopen.Open(ctx, os.Getenv("AOS_TEST_DSN"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	defer st.Close()
	dir := os.Getenv("AOS_TEST_DATA")
	opts := kernel.Options{DataDir: dir, Lease: 500 * time.Millisecond, Heartbeat: 100 * time.Millisecond, CancelPoll: 50 * time.Millisecond, Poll: 20 * time.Millisecond}
	if kill := os.Getenv("AOS_TEST_KILL_AFTER_EXEC"); kill != "" {
		// SIGKILL right after the named step's effect, before its result
		// is journaled.
		opts.Hooks = &kernel.Hooks{AfterExec: func(runID string, seq int) {
			if s, err := st.GetStep(context.Background(), runID, seq); err == nil && s.Kind+"/"+s.Name == kill {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}}
	}
	k := kernel.New(st, opts)
	sb, err := sandbox.New(sandbox.Config{DataDir: dir})
	if err != nil {
		return 2
	}
	deps := backend.Deps{Kernel: k, Sandbox: sb, DataDir: dir}
	_ = k.RunWorker(ctx, kernel.WorkerConfig{Logics: map[string]kernel.Logic{backend.LogicName: backend.Logic(deps)}, JanitorEvery: -1})
	return 0
}

// SIGKILL of the worker while the engine runs: the engine dies with it
// (the sandbox dies with its parent), and on resume aos does not guess:
// it asks the owner whether to rerun from the base, keep the partial
// changes and verify them, or abandon. Keeping them verifies what the
// engine left, and commits nothing, since the engine never reported
// COMPLETED.
func TestCrashMidEngineAsksOwner(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		t.Parallel()
		crashKeepPartial(t, db)
	})
}

func crashKeepPartial(t *testing.T, db storetest.DB) {
	e, rid, w := crashMidEngine(t, db, "hang")
	if _, err := e.k.ResolveWait(context.Background(), w.ID, kernel.ReconcileRan, "owner"); err != nil {
		t.Fatal(err)
	}
	_, out := e.wait(rid, kernel.StatusPartial)
	if out.EngineResult.Status != backend.OutcomeInterrupted || out.Commit != "" || out.Inspection == nil {
		t.Fatalf("outcome %+v", out)
	}
	found := false
	for _, f := range out.Inspection.Files {
		found = found || f.Path == "partial.txt"
	}
	if !found {
		t.Fatalf("the partial change was not inspected: %+v", out.Inspection.Files)
	}
}

// Answering "run it" reruns the engine from the base: the interrupted
// run's partial file is gone, and the rerun's work is verified and
// committed.
func TestCrashMidEngineRerunFromBase(t *testing.T) {
	t.Parallel()
	e, rid, w := crashMidEngine(t, storetest.New(t, "sqlite"), "hangonce")
	if _, err := e.k.ResolveWait(context.Background(), w.ID, kernel.ReconcileRerun, "owner"); err != nil {
		t.Fatal(err)
	}
	_, out := e.wait(rid, kernel.StatusDone)
	if out.Inspection == nil || len(out.Inspection.WriteSet) != 1 || out.Inspection.WriteSet[0] != "hello.txt" {
		t.Fatalf("write set %+v, want only hello.txt (the partial files are gone)", out.Inspection)
	}
}

// crashMidEngine starts a worker child on a mission whose engine hangs,
// SIGKILLs the child once the engine started, resumes in this process and
// returns the owner's reconcile question.
func crashMidEngine(t *testing.T, db storetest.DB, mode string) (*env, string, store.Wait) {
	e := newEnv(t, db)
	_, rid := e.mission(e.commandInput(mode), kernel.Budget{})
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "AOS_TEST_CHILD=worker", "AOS_TEST_DSN="+db.DSN, "AOS_TEST_DATA="+e.dataDir)
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	started := filepath.Join(e.wt, "started")
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the engine never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()

	e.start()
	w := waitPending(t, db.Store, rid)
	var q struct {
		Reconcile bool     `json:"reconcile"`
		Options   []string `json:"options"`
		StepName  string   `json:"stepName"`
	}
	if err := json.Unmarshal(w.Payload, &q); err != nil || !q.Reconcile || len(q.Options) != 3 || !strings.HasPrefix(q.StepName, "command:") {
		t.Fatalf("question %s", w.Payload)
	}
	return e, rid, w
}

func waitPending(t *testing.T, st store.Store, rid string) store.Wait {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ws, _ := st.ListWaits(context.Background(), store.ListWaitsParams{Status: "pending", RunID: rid})
		if len(ws) > 0 {
			return ws[0]
		}
		if r, _ := st.GetRun(context.Background(), rid); kernel.IsTerminal(r.Status) {
			t.Fatalf("run ended %s (%s) instead of asking", r.Status, r.Result)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("no question")
	return store.Wait{}
}

// SIGKILL right after the governed commit was made and before it was
// journaled: on resume the commit step's probe finds the commit (on the
// base, with this mission's trailer) and records it instead of committing
// again. Exactly one commit, no question.
func TestCrashAfterCommitIsNotRepeated(t *testing.T) {
	t.Parallel()
	db := storetest.New(t, "sqlite")
	e := newEnv(t, db)
	mid, rid := e.mission(e.commandInput("edit"), kernel.Budget{})
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "AOS_TEST_CHILD=worker", "AOS_TEST_DSN="+db.DSN, "AOS_TEST_DATA="+e.dataDir, "AOS_TEST_KILL_AFTER_EXEC=git/commit")
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	err := child.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != -1 {
		t.Fatalf("the child did not die by the kill hook: %v", err)
	}
	branch := "aos/" + mid[:8]
	committed := e.hostGit(e.repo, "rev-parse", branch)
	if committed == e.base {
		t.Fatal("the kill came before the commit")
	}
	e.start()
	_, out := e.wait(rid, kernel.StatusDone)
	if out.Commit != committed {
		t.Fatalf("outcome commit %s, branch had %s", out.Commit, committed)
	}
	if n := e.hostGit(e.repo, "rev-list", "--count", e.base+".."+branch); n != "1" {
		t.Fatalf("%s commits on the branch, want 1", n)
	}
}
