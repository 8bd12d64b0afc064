package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/tool"
)

// childWriteLoop is the child role of TestCrashLeavesNoCommittableTempFile:
// it writes a large file over and over until it is killed.
func childWriteLoop(ws string) int {
	tc := &tool.Context{Workspace: ws}
	big := strings.Repeat("x", 32<<20)
	for i := 0; ; i++ {
		in, _ := json.Marshal(map[string]any{"path": "data/big.txt", "content": big[:len(big)-i%2]})
		if _, err := tool.WriteFile().Run(context.Background(), tc, in); err != nil {
			return 1
		}
	}
}

// TestCrashLeavesNoCommittableTempFile models issue 11 item 4: a worker
// killed (SIGKILL) in the middle of write_file leaves its temp file
// behind. The temp file must be where git never looks (.git/aos-tmp), so
// the next git_commit of everything does not commit it.
func TestCrashLeavesNoCommittableTempFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("short mode")
	}
	tc := newTC(t)
	ws := tc.Workspace
	git(t, ws, "init", "-q", "-b", "main")
	write(t, filepath.Join(ws, "README"), "r\n")
	git(t, ws, "add", "-A")
	git(t, ws, "commit", "-q", "-m", "init")

	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "AOS_TOOL_TEST_CHILD=write-loop", "AOS_TOOL_TEST_WS="+ws)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	// Kill the child the moment a temp file exists, wherever it is.
	var temps []string
	deadline := time.Now().Add(20 * time.Second)
	for len(temps) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no temp file seen within 20s")
		}
		temps = findTemps(t, ws)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	if temps = findTemps(t, ws); len(temps) == 0 {
		t.Skip("the child finished its rename before the kill landed; nothing left to test this time")
	}
	for _, p := range temps {
		if !strings.HasPrefix(p, ".git/aos-tmp/") {
			t.Errorf("temp file %s left in the worktree", p)
		}
	}
	res := run(t, tool.GitCommit(), tc, map[string]any{"message": "after crash", "paths": nil})
	if !res.OK {
		t.Fatalf("git_commit: %s", res.Output)
	}
	files := git(t, ws, "ls-tree", "-r", "--name-only", "HEAD")
	if strings.Contains(files, ".aos-write-") {
		t.Errorf("a temp file was committed:\n%s", files)
	}
	if !strings.Contains(files, "README") {
		t.Errorf("positive control: README not in the tree:\n%s", files)
	}
}

// findTemps lists temp files of atomic writes anywhere in ws.
func findTemps(t *testing.T, ws string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".aos-write-") {
			rel, _ := filepath.Rel(ws, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// TestStaleTempFilesSwept: a write sweeps temp files older than the stale
// age from .git/aos-tmp (debris of an earlier crash) and keeps young ones
// (a concurrent write in progress).
func TestStaleTempFilesSwept(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	ws := tc.Workspace
	old, young := filepath.Join(ws, ".git/aos-tmp/.aos-write-old"), filepath.Join(ws, ".git/aos-tmp/.aos-write-young")
	write(t, old, "debris")
	write(t, young, "in progress")
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	if res := run(t, tool.WriteFile(), tc, map[string]any{"path": "a.txt", "content": "x"}); !res.OK {
		t.Fatal(res.Output)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("stale temp file kept: %v", err)
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("young temp file removed: %v", err)
	}
	if got := findTemps(t, ws); len(got) != 1 {
		t.Errorf("temp files after the write: %v", got)
	}
}

// TestWriteWithoutUsableTempDir: when .git/aos-tmp cannot hold the temp
// file (here it is a symlink to outside, which is never followed) the
// write still happens, with the temp file next to its target, and nothing
// appears outside.
func TestWriteWithoutUsableTempDir(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(tc.Workspace, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(tc.Workspace, ".git/aos-tmp")); err != nil {
		t.Fatal(err)
	}
	if res := run(t, tool.WriteFile(), tc, map[string]any{"path": "a.txt", "content": "x"}); !res.OK || read(t, filepath.Join(tc.Workspace, "a.txt")) != "x" {
		t.Fatalf("write: %s", res.Output)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("temp file written through the symlink: %v", ents)
	}
	if got := findTemps(t, tc.Workspace); len(got) != 0 {
		t.Errorf("temp files left: %v", got)
	}
}

// TestTempDebrisNeverCommittedFromAWorktree: in a linked worktree (where
// missions work; .git is a file there, so temp files are made next to
// their targets) the debris a crash left is never staged by git_commit,
// whether it commits everything or names the debris's directory; the
// files beside it are committed.
func TestTempDebrisNeverCommittedFromAWorktree(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	git(t, repo, "init", "-q", "-b", "main")
	write(t, filepath.Join(repo, "README"), "r\n")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "init")
	wt, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	wt = filepath.Join(wt, "m1")
	git(t, repo, "worktree", "add", "-q", "-b", "aos/m1", wt)
	for _, paths := range []any{nil, []string{"sub"}} {
		write(t, filepath.Join(wt, "sub", "kept.txt"), fmt.Sprintf("kept %v\n", paths))
		write(t, filepath.Join(wt, "sub", ".aos-write-0123456789abcdef"), "half-written")
		write(t, filepath.Join(wt, ".aos-write-fedcba9876543210"), "half-written")
		tc := &tool.Context{RunID: "run-1", MissionID: "mis-1", Workspace: wt, Network: sandbox.NetworkNone, Artifacts: &memArtifacts{}}
		res := run(t, tool.GitCommit(), tc, map[string]any{"message": "after crash", "paths": paths})
		if !res.OK {
			t.Fatalf("git_commit %v: %s", paths, res.Output)
		}
		files := git(t, wt, "ls-tree", "-r", "--name-only", "HEAD")
		if strings.Contains(files, ".aos-write-") {
			t.Errorf("paths %v: a temp file was committed:\n%s", paths, files)
		}
		if !strings.Contains(files, "sub/kept.txt") {
			t.Errorf("paths %v: positive control: sub/kept.txt not committed:\n%s", paths, files)
		}
	}
}
