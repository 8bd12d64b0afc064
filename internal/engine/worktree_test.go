package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/worker"
)

// worktreeScript writes and commits a file, checks from the sandboxed
// shell what git may do in a linked worktree, and finishes.
const worktreeScript = `name: wt
turns:
  - tool_calls:
      - {name: write_file, input: {path: out.txt, content: "mission work\n"}}
      - {name: git_commit, input: {message: "add out.txt"}}
      - {name: shell, input: {command: "git -c safe.directory='*' log --oneline -1 >/dev/null 2>&1 && echo git-read-ok || echo git-read-refused; git -c safe.directory='*' -c user.name=m -c user.email=m@m commit -q --allow-empty -m sneaky 2>/dev/null && echo git-commit-ok || echo git-commit-refused; git -c safe.directory='*' config core.fsmonitor /tmp/evil 2>/dev/null && echo git-config-ok || echo git-config-refused; echo hi > left.txt"}}
  - expect: [{tool_results: 3}]
    tool_calls:
      - {name: finish, input: {status: partial, summary: "wt done", evidence: [], openQuestions: []}}
`

// ownerState is what the owner's checkout is, byte for byte: every file
// outside .git, the index, HEAD and the branch HEAD names.
type ownerState struct {
	files       map[string]string
	index, head []byte
	mainRef     string
}

func captureOwner(t *testing.T, e *env) ownerState {
	t.Helper()
	s := ownerState{files: map[string]string{}}
	err := filepath.WalkDir(e.ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(e.ws, p)
		if rel == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fi, _ := d.Info()
			s.files[rel] = fi.Mode().String() + ":" + string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.index, err = os.ReadFile(filepath.Join(e.ws, ".git", "index")); err != nil {
		t.Fatal(err)
	}
	if s.head, err = os.ReadFile(filepath.Join(e.ws, ".git", "HEAD")); err != nil {
		t.Fatal(err)
	}
	s.mainRef = e.git("rev-parse", "refs/heads/main")
	return s
}

func (s ownerState) diff(t *testing.T, after ownerState) {
	t.Helper()
	if len(s.files) != len(after.files) {
		t.Errorf("the owner's files: %d before, %d after", len(s.files), len(after.files))
	}
	for k, v := range s.files {
		if after.files[k] != v {
			t.Errorf("the owner's %s changed: %q → %q", k, v, after.files[k])
		}
	}
	if !bytes.Equal(s.index, after.index) {
		t.Error("the owner's .git/index changed")
	}
	if !bytes.Equal(s.head, after.head) || s.mainRef != after.mainRef {
		t.Errorf("the owner's HEAD changed: %q %s → %q %s", s.head, s.mainRef, after.head, after.mainRef)
	}
}

// dirtyOwner leaves the owner's checkout with a modified tracked file, a
// staged change and an untracked file, as someone mid-edit.
func dirtyOwner(t *testing.T, e *env) {
	t.Helper()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(e.ws, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("test.sh", "# staged by the owner\n"+readFile(t, filepath.Join(e.ws, "test.sh")))
	gitIn(t, e.ws, "add", "test.sh")
	write("calc.sh", readFile(t, filepath.Join(e.ws, "calc.sh"))+"# owner's unstaged edit\n")
	write("notes.txt", "owner's untracked notes\n")
	write(".gitignore", "*.log\n")
	write("debug.log", "ignored\n")
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// startN runs a worker with n concurrent runs until the test ends.
func (e *env) startN(n int) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = e.k.RunWorker(ctx, kernel.WorkerConfig{Concurrency: n, Logics: map[string]kernel.Logic{engine.LogicName: engine.AgentLogic(e.deps())}, JanitorEvery: 50 * time.Millisecond})
	}()
	e.t.Cleanup(func() { cancel(); wg.Wait() })
}

// preparedMission creates a mission the way the service does: its base
// recorded first (engine.PrepareBase).
func (e *env) preparedMission(in engine.Input) string {
	e.t.Helper()
	in.Workspace = e.ws
	if err := engine.PrepareBase(context.Background(), &in); err != nil {
		e.t.Fatal(err)
	}
	return e.mission(in)
}

// TestMissionsRunInTheirOwnWorktrees runs three missions at once on one
// project while the owner is mid-edit. Each commits only to its own
// branch, from the owner's HEAD; the owner's files, index, HEAD and
// current branch are byte-identical afterwards; no worktree is left.
func TestMissionsRunInTheirOwnWorktrees(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		e := newEnv(t, db, worktreeScript)
		dirtyOwner(t, e)
		before := captureOwner(t, e)
		head := e.git("rev-parse", "HEAD")
		var rids []string
		for range 3 {
			rids = append(rids, e.preparedMission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:wt"}))
		}
		e.startN(3)
		seen := map[string]bool{}
		for _, rid := range rids {
			r := e.wait(rid, kernel.StatusPartial, kernel.StatusFailed, kernel.StatusBlocked)
			if r.Status != kernel.StatusPartial {
				e.dumpSteps(rid)
				t.Fatalf("status %s: %s %s", r.Status, r.Error, r.Result)
			}
			mid, br := r.MissionID, e.branchOf(rid)
			// Two commits on the branch: the model's, then the leftovers
			// (left.txt) saved when the worktree was removed.
			log := e.git("log", "--format=%s|%b", head+".."+br)
			if n := e.git("rev-list", "--count", head+".."+br); n != "2" || strings.Count(log, "Aos-Mission: "+mid) != 2 {
				t.Errorf("branch %s has %s commits over the base:\n%s", br, n, log)
			}
			if e.git("merge-base", head, br) != head {
				t.Errorf("branch %s does not start at the owner's HEAD", br)
			}
			tree := e.branchTree(rid)
			if readFile(t, filepath.Join(tree, "out.txt")) != "mission work\n" || readFile(t, filepath.Join(tree, "left.txt")) != "hi\n" {
				t.Errorf("branch %s lacks the mission's files", br)
			}
			for _, n := range []string{"notes.txt", "debug.log"} {
				if _, err := os.Stat(filepath.Join(tree, n)); err == nil {
					t.Errorf("the owner's uncommitted %s reached branch %s", n, br)
				}
			}
			if strings.Contains(readFile(t, filepath.Join(tree, "calc.sh")), "owner's unstaged edit") {
				t.Errorf("the owner's unstaged edit reached branch %s", br)
			}
			seen[br] = true
			// What git does inside the sandbox, in a linked worktree.
			steps, _ := db.Store.ListSteps(context.Background(), rid, -1, 0)
			for _, s := range steps {
				if s.Kind == "tool_call" && s.Name == "shell" {
					for _, want := range []string{"git-commit-refused", "git-config-refused"} {
						if !strings.Contains(string(s.Result), want) {
							t.Errorf("sandboxed git: want %s in %.400s", want, s.Result)
						}
					}
					t.Logf("sandboxed git in a worktree: %.200s", s.Result)
				}
			}
		}
		if len(seen) != 3 {
			t.Errorf("branches %v, want 3 distinct", seen)
		}
		before.diff(t, captureOwner(t, e))
		if wts := e.git("worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
			t.Errorf("worktrees left after the missions:\n%s", wts)
		}
		ents, _ := os.ReadDir(engine.DefaultWorktreeRoot(e.dir))
		for _, d := range ents {
			if d.IsDir() {
				t.Errorf("%s left under the worktree root", d.Name())
			}
		}
		if cfg := readFile(t, filepath.Join(e.ws, ".git", "config")); strings.Contains(cfg, "evil") {
			t.Errorf("a sandboxed command wrote the project's .git/config:\n%s", cfg)
		}
	})
}

// TestWorktreeSurvivesAKill SIGKILLs the worker right after the worktree
// was made (before its step was recorded), and right after it was removed,
// then resumes: there is never more than one worktree, the mission
// completes, and none is left.
func TestWorktreeSurvivesAKill(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		for _, kill := range []string{"worktree_add", "worktree_remove"} {
			t.Run(kill, func(t *testing.T) {
				e := newEnv(t, storetest.New(t, db.Driver), worktreeScript)
				rid := e.preparedMission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:wt"})
				child := func(extra ...string) error { return e.runChild(t, rid, extra...) }
				err := child("AOS_TEST_KILL_TOOL=" + kill)
				var ee *exec.ExitError
				if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
					t.Fatalf("first child was not killed: %v", err)
				}
				registered := strings.Count(e.git("worktree", "list", "--porcelain"), "worktree ") - 1
				want := map[string]int{"worktree_add": 1, "worktree_remove": 0}[kill]
				if registered != want {
					t.Fatalf("after the kill: %d worktrees registered, want %d", registered, want)
				}
				if err := child(); err != nil {
					t.Fatalf("resuming child: %v", err)
				}
				r := e.wait(rid, kernel.StatusPartial, kernel.StatusFailed, kernel.StatusBlocked, kernel.StatusWaiting)
				if r.Status != kernel.StatusPartial {
					e.dumpSteps(rid)
					t.Fatalf("status %s: %s %s", r.Status, r.Error, r.Result)
				}
				if wts := e.git("worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
					t.Errorf("worktrees left after the mission:\n%s", wts)
				}
				if ents, _ := os.ReadDir(filepath.Join(e.ws, ".git", "worktrees")); len(ents) != 0 {
					t.Errorf("%d worktree registrations left in .git/worktrees", len(ents))
				}
				if n := e.git("rev-list", "--count", "main.."+e.branchOf(rid)); n != "2" {
					t.Errorf("commits on the mission branch = %s, want 2", n)
				}
				steps, _ := e.db.Store.ListSteps(context.Background(), rid, -1, 0)
				adds := 0
				for _, s := range steps {
					if s.Name == "worktree_add" {
						adds++
						var info struct{ Path string }
						_ = json.Unmarshal(s.Result, &info)
						if s.Status != "completed" || info.Path == "" {
							t.Errorf("worktree_add step %s: %s", s.Status, s.Result)
						}
					}
				}
				if adds != 1 {
					t.Errorf("%d worktree_add steps, want 1", adds)
				}
			})
		}
	})
}

// TestIncludeUncommittedBase: the base of a mission that asks for the
// owner's uncommitted changes holds them (modified, staged and untracked
// files; ignored ones left out) in a commit on top of HEAD, and the
// owner's index, HEAD and files are untouched. Without the flag the base is
// HEAD.
func TestIncludeUncommittedBase(t *testing.T) {
	e := newEnv(t, storetest.New(t, "sqlite"), worktreeScript)
	dirtyOwner(t, e)
	before := captureOwner(t, e)
	head := e.git("rev-parse", "HEAD")
	plain := engine.Input{Objective: "o", Model: "script:wt", Workspace: e.ws}
	if err := engine.PrepareBase(context.Background(), &plain); err != nil || plain.Base != head || plain.Snapshot != "" {
		t.Fatalf("without the flag: base %s snapshot %q (%v), want HEAD %s", plain.Base, plain.Snapshot, err, head)
	}
	in := engine.Input{Objective: "o", Model: "script:wt", Workspace: e.ws, IncludeUncommitted: true}
	if err := engine.PrepareBase(context.Background(), &in); err != nil {
		t.Fatal(err)
	}
	if in.Base == head || in.Snapshot != in.Base || e.git("rev-parse", in.Base+"^") != head {
		t.Fatalf("snapshot %s base %s, want a commit whose parent is HEAD %s", in.Snapshot, in.Base, head)
	}
	show := func(p string) string { return e.git("show", in.Base+":"+p) }
	if !strings.Contains(show("calc.sh"), "owner's unstaged edit") || !strings.HasPrefix(show("test.sh"), "# staged by the owner") ||
		show("notes.txt") != "owner's untracked notes" {
		t.Errorf("the snapshot lacks the owner's changes")
	}
	if files := e.git("ls-tree", "--name-only", in.Base); strings.Contains(files, "debug.log") {
		t.Errorf("the snapshot holds an ignored file:\n%s", files)
	}
	before.diff(t, captureOwner(t, e))
	if staged := e.git("diff", "--cached", "--name-only"); staged != "test.sh" {
		t.Errorf("the owner's staged set changed: %q", staged)
	}
	// A mission from that base sees the owner's changes in its worktree.
	rid := e.mission(in)
	e.start()
	if r := e.wait(rid, kernel.StatusPartial, kernel.StatusFailed, kernel.StatusBlocked); r.Status != kernel.StatusPartial {
		t.Fatalf("status %s: %s", r.Status, r.Result)
	}
	if readFile(t, filepath.Join(e.branchTree(rid), "notes.txt")) != "owner's untracked notes\n" {
		t.Error("the mission's branch does not start from the snapshot")
	}
	before.diff(t, captureOwner(t, e))
}

const waitScript = `name: waiter
turns:
  - tool_calls:
      - {name: write_file, input: {path: draft.txt, content: "draft\n"}}
  - tool_calls: [{name: ask_owner, input: {question: "ready?", options: null}}]
`

// TestSweepRemovesWorktreesOfEndedMissions: a mission cancelled while it
// waits for the owner never runs its removal step; the sweep removes its
// worktree (saving its uncommitted work on the branch) and leaves the
// worktrees of live missions alone.
func TestSweepRemovesWorktreesOfEndedMissions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		e := newEnv(t, db, waitScript)
		e.startN(2)
		cancelled := e.preparedMission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:waiter"})
		live := e.preparedMission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:waiter"})
		e.pendingWait(cancelled)
		e.pendingWait(live)
		if err := e.k.RequestCancel(context.Background(), e.missionOf(cancelled)); err != nil {
			t.Fatal(err)
		}
		e.wait(cancelled, kernel.StatusCancelled)
		root := engine.DefaultWorktreeRoot(e.dir)
		if _, err := os.Stat(filepath.Join(root, e.missionOf(cancelled))); err != nil {
			t.Fatalf("the cancelled mission's worktree should still be there before the sweep: %v", err)
		}
		n, err := engine.SweepWorktrees(context.Background(), root, worker.MissionLookup(db.Store))
		if err != nil || n != 1 {
			t.Fatalf("sweep removed %d (%v), want 1", n, err)
		}
		if _, err := os.Stat(filepath.Join(root, e.missionOf(cancelled))); !os.IsNotExist(err) {
			t.Errorf("the cancelled mission's worktree is still there: %v", err)
		}
		if _, err := os.Stat(filepath.Join(root, e.missionOf(live), "draft.txt")); err != nil {
			t.Errorf("the live mission's worktree was touched: %v", err)
		}
		if got := e.git("show", e.branchOf(cancelled)+":draft.txt"); got != "draft" {
			t.Errorf("the cancelled mission's uncommitted work was not saved on its branch: %q", got)
		}
		if wts := e.git("worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 2 {
			t.Errorf("want the project and the live mission's worktree:\n%s", wts)
		}
	})
}
