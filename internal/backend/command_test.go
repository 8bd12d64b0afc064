package backend_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
)

// A command engine edits its worktree; aos verifies the change itself and
// commits it on aos/<id8> with its trailers, HEAD of the owner's checkout
// untouched, and stores the change-set record as an artifact.
func TestCommandEngineVerifiedCommit(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		t.Parallel()
		e := newEnv(t, db)
		mid, rid := e.mission(e.commandInput("edit"), kernel.Budget{})
		e.start()
		r, out := e.wait(rid, kernel.StatusDone)
		if out.Commit == "" || out.ChangeSet == "" {
			t.Fatalf("outcome %+v", out)
		}
		branch := "aos/" + mid[:8]
		if got := e.hostGit(e.repo, "rev-parse", branch); got != out.Commit {
			t.Fatalf("branch %s at %s, outcome says %s", branch, got, out.Commit)
		}
		if got := e.hostGit(e.repo, "rev-parse", out.Commit+"^"); got != e.base {
			t.Fatalf("commit's parent %s, want the base %s", got, e.base)
		}
		msg := e.hostGit(e.repo, "log", "-1", "--format=%B", out.Commit)
		for _, want := range []string{"Aos-Mission: " + mid, "Aos-Engine: command:", "Aos-Verified: /bin/sh check.sh"} {
			if !strings.Contains(msg, want) {
				t.Errorf("commit message lacks %q:\n%s", want, msg)
			}
		}
		if got := e.hostGit(e.repo, "rev-parse", "HEAD"); got != e.base {
			t.Fatalf("the owner's HEAD moved to %s", got)
		}
		f, _, err := e.k.OpenArtifact(context.Background(), out.ChangeSet)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		body, _ := io.ReadAll(f)
		var cs backend.ChangeSet
		if err := json.Unmarshal(body, &cs); err != nil {
			t.Fatal(err)
		}
		ops := map[string]string{}
		for _, fc := range cs.Files {
			ops[fc.Path] = fc.Op
		}
		if cs.BaseCommit != e.base || cs.Commit != out.Commit || ops["hello.txt"] != "added" || ops["old.txt"] != "deleted" || len(cs.Verification) != 1 || !cs.Verification[0].Passed {
			t.Fatalf("change set %s", body)
		}
		if len(out.Criteria) != 1 || !out.Criteria[0].Passes {
			t.Fatalf("criteria %+v", out.Criteria)
		}
		_ = r
	})
}

// Each refusal, from outside: the mission does not end done, nothing is
// committed on the branch, and the evidence says why.
func TestCommandEngineRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode, status, summary string
		check                 func(t *testing.T, e *env, out backend.Outcome)
	}{
		{mode: "secret", status: kernel.StatusBlocked, summary: "secret scan", check: func(t *testing.T, e *env, out backend.Outcome) {
			if out.Inspection == nil || len(out.Inspection.Findings) == 0 || out.Inspection.Findings[0].Rule != "aws-access-token" {
				t.Fatalf("inspection %+v", out.Inspection)
			}
			raw, _ := json.Marshal(out)
			if strings.Contains(string(raw), "AKIAZ7QW3ERTY5UIOPLK") {
				t.Fatal("the secret itself is in the outcome")
			}
		}},
		{mode: "commit", status: kernel.StatusBlocked, summary: "moved HEAD"},
		{mode: "badverify", status: kernel.StatusPartial, summary: "refused", check: func(t *testing.T, e *env, out backend.Outcome) {
			var refused *backend.VerifyResult
			for i, v := range out.Verification {
				if v.Argv[0] == "/usr/bin/curl" {
					refused = &out.Verification[i]
				}
			}
			if refused == nil || refused.Allowed || refused.Ran {
				t.Fatalf("verification %+v", out.Verification)
			}
		}},
		{mode: "malformed", status: kernel.StatusFailed, summary: "malformed", check: func(t *testing.T, e *env, out backend.Outcome) {
			if out.EngineResult.Status != backend.OutcomeMalformed || !strings.Contains(out.EngineResult.Malformed, "unknown field") {
				t.Fatalf("engine result %+v", out.EngineResult)
			}
		}},
		{mode: "notjson", status: kernel.StatusFailed, summary: "malformed"},
		{mode: "fail", status: kernel.StatusFailed, summary: "FAILED"},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, storetest.New(t, "sqlite"))
			mid, rid := e.mission(e.commandInput(c.mode), kernel.Budget{})
			if c.mode == "commit" {
				go e.commitForEngine()
			}
			e.start()
			_, out := e.wait(rid, c.status)
			var res kernel.Result
			r, _ := e.db.Store.GetRun(context.Background(), rid)
			_ = json.Unmarshal(r.Result, &res)
			if !strings.Contains(res.Summary, c.summary) {
				t.Fatalf("summary %q lacks %q", res.Summary, c.summary)
			}
			if c.mode != "commit" {
				if got := e.hostGit(e.repo, "rev-parse", "aos/"+mid[:8]); got != e.base {
					t.Fatalf("branch moved to %s", got)
				}
			}
			if c.check != nil {
				c.check(t, e, out)
			}
		})
	}
}

// The engine tries to read the data dir (where the env file with keys and
// the database live) and looks for a key in its environment; it finds
// nothing, while it can read its own worktree (the positive control).
func TestCommandEngineCannotReadSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.New(t, "sqlite"))
	keyFile := filepath.Join(e.dataDir, "env")
	if err := os.WriteFile(keyFile, []byte("ANTHROPIC_API_KEY=sk-real-canary\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.withProxy(t) // the engine's environment then holds the run's credential, never the real key
	in := e.commandInput("snoop")
	readme := filepath.Join(e.wt, "README.md")
	in.Objective += " snoop:" + keyFile + " snoop:" + readme
	_, rid := e.mission(in, kernel.Budget{})
	e.start()
	e.wait(rid, kernel.StatusPartial)
	got, err := os.ReadFile(filepath.Join(e.wt, "found.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(string(got)) != readme {
		t.Fatalf("the engine read %q; want only the worktree's README", got)
	}
}

// commitForEngine commits in the worktree when the test engine asks (an
// engine with write access to git's metadata would), then tells it.
func (e *env) commitForEngine() {
	want := filepath.Join(e.wt, ".engine-wants-commit")
	for i := 0; i < 600; i++ {
		if _, err := os.Stat(want); err == nil {
			_ = os.Remove(want)
			_, _ = gitx.Run(context.Background(), gitx.Cmd{Dir: e.wt, Args: []string{"add", "hello.txt"}})
			_, _ = gitx.Run(context.Background(), gitx.Cmd{Dir: e.wt, Args: []string{"commit", "-qm", "engine commit"}, Env: gitx.DefaultIdentity})
			_ = os.WriteFile(filepath.Join(e.wt, ".host-committed"), nil, 0o644)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A mission that names the project itself gets a worktree of its own on
// aos/<id8>, made by the logic; the owner's checkout (HEAD, branch,
// files, uncommitted edit) is untouched, and the worktree is removed once
// its work is committed.
func TestCommandEngineProjectWorkspace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.New(t, "sqlite"))
	e.deps.WorktreeRoot = filepath.Join(t.TempDir(), "worktrees")
	if err := os.WriteFile(filepath.Join(e.repo, "README.md"), []byte("owner's edit\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := e.commandInput("edit")
	in.Workspace = e.repo
	if err := in.Validate(); err != nil {
		t.Fatal(err)
	}
	mid, rid, err := e.k.CreateMission(context.Background(), kernel.MissionSpec{Title: "t", Logic: backend.LogicName, Input: in})
	if err != nil {
		t.Fatal(err)
	}
	e.start()
	_, out := e.wait(rid, kernel.StatusDone)
	if got := e.hostGit(e.repo, "rev-parse", "aos/"+mid[:8]); got != out.Commit {
		t.Fatalf("branch at %s, want %s", got, out.Commit)
	}
	if got := e.hostGit(e.repo, "rev-parse", "HEAD"); got != e.base {
		t.Fatalf("owner's HEAD moved to %s", got)
	}
	if got := e.hostGit(e.repo, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Fatalf("owner's branch is %s", got)
	}
	if b, _ := os.ReadFile(filepath.Join(e.repo, "README.md")); string(b) != "owner's edit\n" {
		t.Fatalf("owner's edit is %q", b)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "hello.txt")); err == nil {
		t.Fatal("the engine's file reached the owner's checkout")
	}
	if _, err := os.Stat(filepath.Join(e.deps.WorktreeRoot, mid)); err == nil {
		t.Fatal("the worktree was not removed")
	}
}

// The engine cannot read other projects: with the workspace root hidden
// (Deps.Hide), another project's file, the owner's checkout (an
// uncommitted file) and another mission's worktree read as nothing, while
// its own worktree and its project's git dir (for git in the worktree)
// stay readable.
func TestCommandEngineCannotReadOtherProjects(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.New(t, "sqlite"))
	workspaceRoot := filepath.Dir(e.repo) // holds repo, as aos's workspace root holds projects
	e.deps.Hide = []string{workspaceRoot}
	e.deps.WorktreeRoot = filepath.Join(t.TempDir(), "worktrees")
	// Run dirs of their own: the default base, the temp dir, holds all of
	// the above and is hidden by the sandbox already.
	e.deps.RunDirBase = t.TempDir()
	other := filepath.Join(workspaceRoot, "other", "secret.txt")
	ownerNotes := filepath.Join(e.repo, "owner-notes.txt")
	sibling := filepath.Join(e.deps.WorktreeRoot, "another-mission", "wip.txt")
	for _, f := range []string{other, ownerNotes, sibling} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("CANARY\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := e.commandInput("snoop")
	in.Workspace = e.repo
	gitHead := filepath.Join(e.repo, ".git", "HEAD")
	in.Objective += " snoop:" + other + " snoop:" + ownerNotes + " snoop:" + sibling + " snoop:README.md snoop:" + gitHead
	mid, rid, err := e.k.CreateMission(context.Background(), kernel.MissionSpec{Title: "t", Logic: backend.LogicName, Input: in})
	if err != nil {
		t.Fatal(err)
	}
	wt := filepath.Join(e.deps.WorktreeRoot, mid)
	e.start()
	e.wait(rid, kernel.StatusPartial)
	got, err := os.ReadFile(filepath.Join(wt, "found.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "README.md\n" + gitHead; strings.TrimSpace(string(got)) != want {
		t.Fatalf("the engine read %q; want only %q", got, want)
	}
}

// TestEngineIODirSwapIgnored: the engine moves aos's io dir (in its
// writable TMPDIR) away and leaves a link to a host directory holding a
// forged result and stderr in its place. aos reads what the engine wrote
// through the directory it made, held open, never the forged files.
func TestEngineIODirSwapIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t, storetest.New(t, "sqlite"))
	plant := t.TempDir()
	forged := `{"schema":"aios.online-agent.runtime-result.v1","status":"COMPLETED","summary":"PLANTED","verification":[]}`
	if err := os.WriteFile(filepath.Join(plant, "result.json"), []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(plant, "stderr.log"), []byte("PLANTED-STDERR\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := e.commandInput("swapio")
	in.Objective += " plant:" + plant
	_, rid := e.mission(in, kernel.Budget{})
	e.start()
	_, out := e.wait(rid, kernel.StatusDone, kernel.StatusPartial, kernel.StatusFailed, kernel.StatusBlocked)
	raw, _ := json.Marshal(out)
	if strings.Contains(string(raw), "PLANTED") || out.EngineResult.Summary != "did swapio" {
		t.Fatalf("aos read the forged files: %s", raw)
	}
}
