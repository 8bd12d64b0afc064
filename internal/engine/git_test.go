package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestSetupRefusesWorkspacesThatAreNotProjects: a mission whose workspace
// is not the top level of a git work tree (a plain directory, a
// subdirectory of a repository), or whose repository config names a
// program, fails at setup, before the model is called and before any git
// that could run the trap; hooks planted in a real project do not run when
// setup creates the mission's worktree and branch.
func TestSetupRefusesWorkspacesThatAreNotProjects(t *testing.T) {
	db := storetest.New(t, "sqlite")
	e := newEnv(t, db, string(demo.Script()))
	e.start()
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	trap := filepath.Join(dir, "trap.sh")
	writeExec(t, trap, "#!/bin/sh\necho ran \"$@\" >> '"+canary+"'\ncat\n")

	plain := filepath.Join(t.TempDir(), "plain")
	if err := os.MkdirAll(plain, 0o755); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(e.ws, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	filtered := filepath.Join(t.TempDir(), "filtered")
	if err := demo.WriteRepo(filtered); err != nil {
		t.Fatal(err)
	}
	gitIn(t, filtered, "config", "filter.x.smudge", trap)
	if err := os.WriteFile(filepath.Join(filtered, ".gitattributes"), []byte("* filter=x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, ws, want string }{
		{"plain directory", plain, "not the top level"},
		{"subdirectory of a repository", sub, "not the top level"},
		{"config with a filter", filtered, "filter.x.smudge"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := len(e.srv.Requests())
			rid := e.mission(engine.Input{Objective: demo.Objective, Criteria: []string{demo.Criterion}, Model: demo.Model, Workspace: c.ws})
			r := e.wait(rid, "failed")
			t.Logf("run error: %s", r.Error)
			if !strings.Contains(r.Error+string(r.Result), c.want) {
				t.Errorf("run failed with %q %s; want it to say %q", r.Error, r.Result, c.want)
			}
			if n := len(e.srv.Requests()); n != before {
				t.Errorf("the model was called %d times for a refused workspace", n-before)
			}
		})
	}

	// A real project with hooks: setup's branch creation runs none.
	for _, h := range []string{"post-checkout", "reference-transaction", "pre-auto-gc"} {
		writeExec(t, filepath.Join(e.ws, ".git", "hooks", h), "#!/bin/sh\nexec '"+trap+"' "+h+"\n")
	}
	rid := e.mission(engine.Input{Objective: demo.Objective, Criteria: []string{demo.Criterion}, Model: demo.Model})
	e.wait(rid, "done")
	if b, err := os.ReadFile(canary); err == nil {
		t.Fatalf("a repository-controlled program ran on the host: %s", b)
	}
	if cur := e.git("symbolic-ref", "--short", "HEAD"); cur != "main" {
		t.Errorf("setup moved the owner's checkout to %s", cur)
	}
	e.git("rev-parse", "--verify", e.branchOf(rid))
}

func writeExec(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// gitIn runs the test's own git (no hooks) in dir.
func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	e := &env{t: t, ws: dir}
	e.git(append([]string{"-c", "core.hooksPath=/dev/null"}, args...)...)
}
