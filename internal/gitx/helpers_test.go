package gitx_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// rawGit runs the real, unhardened git as a test's setup tool (the owner
// or the model preparing a trap), failing the test on error.
func rawGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "core.hooksPath=/dev/null"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}

// newRepo makes a repository with one commit of a.txt and returns its
// top level, symbolic links resolved.
func newRepo(t *testing.T) string { return newRepoB(t) }

// newRepoB is newRepo for tests and benchmarks.
func newRepoB(t testing.TB) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rawGit(t, dir, "init", "-q", "-b", "main")
	writeFile(t, filepath.Join(dir, "a.txt"), "a\n", 0o644)
	rawGit(t, dir, "add", "-A")
	rawGit(t, dir, "commit", "-q", "-m", "init")
	return dir
}

func writeFile(t testing.TB, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

// canary returns a path outside every repository the test makes, and a
// script that appends a line (and its environment) to it when run: the
// program a trap makes git run.
func canary(t *testing.T) (path, script string) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, "canary")
	script = filepath.Join(dir, "trap.sh")
	writeFile(t, script, "#!/bin/sh\necho ran \"$0\" \"$@\" >> '"+path+"'\nenv >> '"+path+"'\ncat\n", 0o755)
	return path, script
}

// assertNoCanary checks from outside git that the trap never ran.
func assertNoCanary(t *testing.T, path string) {
	t.Helper()
	if b, err := os.ReadFile(path); err == nil {
		first, _, _ := strings.Cut(string(b), "\n")
		t.Fatalf("a repository-controlled program ran on the host: %s", first)
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
}
