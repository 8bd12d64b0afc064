package tool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/tool"
)

func newRepo(t *testing.T) *tool.Context {
	t.Helper()
	tc := newTC(t)
	git(t, tc.Workspace, "init", "-q", "-b", "main")
	write(t, filepath.Join(tc.Workspace, "a.txt"), "a\n")
	git(t, tc.Workspace, "add", "-A")
	git(t, tc.Workspace, "commit", "-q", "-m", "init")
	return tc
}

func TestGitCommit(t *testing.T) {
	t.Parallel()
	tc := newRepo(t)
	tc.IdemKey = "step-42"
	// A hook planted in the workspace must not run on the host.
	// post-commit is not skipped by --no-verify; only core.hooksPath stops it.
	for _, h := range []string{"pre-commit", "post-commit"} {
		hook := filepath.Join(tc.Workspace, ".git/hooks", h)
		write(t, hook, "#!/bin/sh\ntouch \"$(git rev-parse --show-toplevel)/hook-ran\"\n")
		if err := os.Chmod(hook, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	commit := tool.GitCommit()
	if res := run(t, commit, tc, `{"message":"nothing","paths":null}`); !res.OK || !strings.Contains(res.Output, "nothing to commit") {
		t.Fatalf("no-op: %+v", res)
	}
	rec, err := commit.(tool.Reconciler).Reconcile(context.Background(), tc, json.RawMessage(`{"message":"m","paths":null}`))
	if err != nil || rec.State != tool.ReconcileNotDone {
		t.Fatalf("reconcile before: %+v %v", rec, err)
	}
	write(t, filepath.Join(tc.Workspace, "a.txt"), "changed\n")
	write(t, filepath.Join(tc.Workspace, "b.txt"), "untracked but not staged\n")
	res := run(t, commit, tc, `{"message":"fix a","paths":["a.txt"]}`)
	if !res.OK || !strings.HasPrefix(res.Output, "committed ") {
		t.Fatalf("commit: %+v", res)
	}
	msg := git(t, tc.Workspace, "log", "-1", "--format=%B")
	for _, want := range []string{"fix a", "Aos-Mission: mis-1", "Aos-Run: run-1", "Aos-Step: step-42"} {
		if !strings.Contains(msg, want) {
			t.Errorf("commit message lacks %q: %s", want, msg)
		}
	}
	if st := git(t, tc.Workspace, "status", "--porcelain"); !strings.Contains(st, "?? b.txt") {
		t.Errorf("b.txt was staged: %s", st)
	}
	if _, err := os.Stat(filepath.Join(tc.Workspace, "hook-ran")); err == nil {
		t.Error("workspace hook ran on the host")
	}
	rec, err = commit.(tool.Reconciler).Reconcile(context.Background(), tc, json.RawMessage(`{"message":"m","paths":null}`))
	if err != nil || rec.State != tool.ReconcileDone {
		t.Fatalf("reconcile after: %+v %v", rec, err)
	}
	if res := run(t, commit, tc, `{"message":"bad","paths":[".git/config"]}`); res.OK {
		t.Error("staged .git internals")
	}
	if res := run(t, tool.GitStatus(), tc, `{}`); !res.OK || !strings.Contains(res.Output, "## main") {
		t.Errorf("status: %+v", res)
	}
	write(t, filepath.Join(tc.Workspace, "a.txt"), "again\n")
	if res := run(t, tool.GitDiff(), tc, `{"path":"a.txt","staged":null}`); !res.OK || !strings.Contains(res.Diff, "+again") {
		t.Errorf("diff: %+v", res)
	}
}

func TestGitPushReconcile(t *testing.T) {
	t.Parallel()
	tc := newRepo(t)
	srv := startGitServer(t)
	git(t, tc.Workspace, "remote", "add", "origin", srv.URL+"/remote.git")
	git(t, tc.Workspace, "config", "http.sslCAInfo", srv.CA)
	push := tool.GitPush()
	in := json.RawMessage(`{"remote":null,"branch":null}`)
	rec, err := push.(tool.Reconciler).Reconcile(context.Background(), tc, in)
	if err != nil || rec.State != tool.ReconcileNotDone {
		t.Fatalf("before push: %+v %v", rec, err)
	}
	res := run(t, push, tc, string(in))
	if !res.OK {
		t.Fatalf("push: %s", res.Output)
	}
	head := strings.TrimSpace(git(t, tc.Workspace, "rev-parse", "HEAD"))
	if got := strings.TrimSpace(git(t, srv.Root, "--git-dir=remote.git", "rev-parse", "refs/heads/main")); got != head {
		t.Fatalf("remote at %s, want %s", got, head)
	}
	rec, err = push.(tool.Reconciler).Reconcile(context.Background(), tc, in)
	if err != nil || rec.State != tool.ReconcileDone {
		t.Fatalf("after push: %+v %v", rec, err)
	}
	if res := run(t, push, tc, `{"remote":"nowhere","branch":null}`); res.OK {
		t.Error("push to a missing remote succeeded")
	}
	rec, _ = push.(tool.Reconciler).Reconcile(context.Background(), tc, json.RawMessage(`{"remote":"nowhere","branch":null}`))
	if rec.State != tool.ReconcileUnknown {
		t.Errorf("missing remote: %+v", rec)
	}
}
