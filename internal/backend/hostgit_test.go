package backend_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
)

// plant writes a program that leaves a canary file when run, and returns
// the program and the canary's path.
func plant(t *testing.T, dir, name string) (prog, canary string) {
	t.Helper()
	canary = filepath.Join(dir, "canary."+name)
	prog = filepath.Join(dir, name+".sh")
	if err := os.WriteFile(prog, []byte(fmt.Sprintf("#!/bin/sh\ntouch %s\ncat\n", canary)), 0o755); err != nil {
		t.Fatal(err)
	}
	return prog, canary
}

// Host-side git in verification and the commit runs none of the programs
// a worktree's git metadata names: an fsmonitor in the worktree's own
// config, and hooks (pre-commit, commit-msg, post-commit,
// reference-transaction) in the repository and a hooksPath. The commit
// still happens (positive control), and no canary appears.
func TestHostGitRunsNoFsmonitorOrHook(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.New(t, "sqlite"))
	canaries := t.TempDir()
	mid, rid := e.mission(e.commandInput("edit"), kernel.Budget{})
	_ = mid
	fsmon, fsCanary := plant(t, canaries, "fsmonitor")
	hook, hookCanary := plant(t, canaries, "hook")
	e.hostGit(e.repo, "config", "extensions.worktreeConfig", "true")
	admin := strings.TrimSpace(e.hostGit(e.wt, "rev-parse", "--absolute-git-dir"))
	if err := os.WriteFile(filepath.Join(admin, "config.worktree"), []byte("[core]\n\tfsmonitor = "+fsmon+"\n\thooksPath = "+canaries+"/hooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Join(e.repo, ".git", "hooks"), filepath.Join(canaries, "hooks")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "reference-transaction", "post-index-change"} {
			b, _ := os.ReadFile(hook)
			if err := os.WriteFile(filepath.Join(d, h), b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	e.start()
	_, out := e.wait(rid, kernel.StatusDone)
	if out.Commit == "" {
		t.Fatal("no commit")
	}
	for _, c := range []string{fsCanary, hookCanary} {
		if _, err := os.Stat(c); err == nil {
			t.Errorf("host git ran %s", filepath.Base(c))
		}
	}
}

// A filter driver defined in the worktree's config and named by the
// change's .gitattributes would run on `git add`: aos refuses the worktree
// instead, with evidence, and the canary never appears.
func TestHostGitRefusesFilterDriver(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.New(t, "sqlite"))
	canaries := t.TempDir()
	_, rid := e.mission(e.commandInput("gitcfg"), kernel.Budget{})
	filter, canary := plant(t, canaries, "filter")
	e.hostGit(e.repo, "config", "extensions.worktreeConfig", "true")
	admin := strings.TrimSpace(e.hostGit(e.wt, "rev-parse", "--absolute-git-dir"))
	cfg := "[filter \"evil\"]\n\tclean = " + filter + "\n\tsmudge = " + filter + "\n[diff \"evil\"]\n\ttextconv = " + filter + "\n"
	go func() {
		// Planted while the engine runs, after aos's setup checked the
		// config, as an engine that can write git's metadata would.
		want := filepath.Join(e.wt, ".engine-wants-plant")
		for i := 0; i < 600; i++ {
			if _, err := os.Stat(want); err == nil {
				_ = os.Remove(want)
				_ = os.WriteFile(filepath.Join(admin, "config.worktree"), []byte(cfg), 0o644)
				_ = os.WriteFile(filepath.Join(e.wt, ".host-planted"), nil, 0o644)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	e.start()
	r, _ := e.wait(rid, kernel.StatusBlocked)
	if !strings.Contains(string(r.Result), "refused the engine's change") {
		t.Fatalf("not refused at verification: %s", r.Result)
	}
	if !strings.Contains(string(r.Result), "filter.evil.clean") {
		t.Fatalf("result does not name the driver: %s", r.Result)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("host git ran the filter driver")
	}
}
