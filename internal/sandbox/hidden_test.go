//go:build linux

package sandbox_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
)

// TestOwnerHomeHidden: world-readable owner files in the home are
// unreadable; the workspace inside the home stays readable and writable;
// an allowed path is readable, and protected paths inside it stay hidden.
func TestOwnerHomeHidden(t *testing.T) {
	t.Parallel()
	root := realTemp(t)
	home := filepath.Join(root, "home")
	ws := filepath.Join(home, "project")
	allowed := filepath.Join(home, "tools")
	dataDir := filepath.Join(home, ".local", "share", "aos")
	for _, d := range []string{ws, filepath.Join(home, ".kube"), allowed, filepath.Join(home, ".ssh"), filepath.Join(root, "runs"), dataDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secrets := map[string]string{
		".npmrc":                  "NPM-TOKEN-CANARY",
		".kube/config":            "KUBE-CANARY",
		".bash_history":           "HISTORY-CANARY",
		".ssh/id_rsa":             "SSH-CANARY",      // allowed below, but a protected path
		".local/share/aos/aos.db": "DATA-DIR-CANARY", // allowed (.local), but aos's data dir
	}
	for rel, v := range secrets {
		writeFile(t, filepath.Join(home, rel), v)
	}
	writeFile(t, filepath.Join(ws, "main.go"), "WORKSPACE-OK")
	writeFile(t, filepath.Join(allowed, "tool.txt"), "ALLOWED-OK")
	runs, err := sandbox.RunDirs(filepath.Join(root, "runs"), "r")
	if err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, sandbox.Config{HostHome: home, DataDir: dataDir, AllowRead: []string{allowed, filepath.Join(home, ".ssh"), filepath.Join(home, ".local")}})
	cmd := fmt.Sprintf("cd %q; cat .npmrc .kube/config .bash_history .ssh/id_rsa .local/share/aos/aos.db; echo ls=$(ls -A); cat project/main.go tools/tool.txt; echo new > project/new; echo done", home)
	out, err := sb.Run(t.Context(), sandbox.Spec{Command: cmd, Workspace: ws, TmpDir: runs.TmpDir, Home: runs.Home})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out.Output)
	for rel, v := range secrets {
		if strings.Contains(s, v) {
			t.Errorf("%s readable: %s", rel, s)
		}
	}
	if !strings.Contains(s, "ls=.local .ssh project tools\n") {
		t.Errorf("home listing: %s", s)
	}
	// Positive controls: workspace read and write, allowed path read.
	for _, want := range []string{"WORKSPACE-OK", "ALLOWED-OK", "done"} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %s: %s", want, s)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "new")); string(b) != "new\n" {
		t.Errorf("workspace write: %q; output %s", b, s)
	}
}

// TestOtherRunDirsHidden: run B cannot list or read run A's HOME and
// TMPDIR, even as root (which 0700 does not stop); run A reads its own.
func TestOtherRunDirsHidden(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	base := filepath.Join(realTemp(t), "runs")
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	a, err := sandbox.RunDirs(base, "run-a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := sandbox.RunDirs(base, "run-b")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(a.Home, "secret"), "RUN-A-CANARY")
	writeFile(t, filepath.Join(a.TmpDir, "scratch"), "RUN-A-TMP-CANARY")
	cmd := fmt.Sprintf("echo ls=$(ls -A %q); cat %q %q; echo done", base, filepath.Join(a.Home, "secret"), filepath.Join(a.TmpDir, "scratch"))
	for _, c := range []struct {
		run  sandbox.RunPaths
		sees bool
	}{{b, false}, {a, true}} { // run A itself: positive control
		out, err := st.sb.Run(t.Context(), sandbox.Spec{Command: cmd, Workspace: st.workspace, TmpDir: c.run.TmpDir, Home: c.run.Home})
		if err != nil {
			t.Fatal(err)
		}
		s := string(out.Output)
		if got := strings.Contains(s, "RUN-A-CANARY") && strings.Contains(s, "RUN-A-TMP-CANARY"); got != c.sees {
			t.Errorf("%s reads run A's files: %v, want %v; output %s", c.run.Root, got, c.sees, s)
		}
		if want := "ls=" + filepath.Base(c.run.Root) + "\n"; !strings.Contains(s, want) {
			t.Errorf("%s: listing of the run-dir base: want %q in %s", c.run.Root, want, s)
		}
	}
}

// TestHiddenDirInsideWorkspaceRefused: a workspace that contains the
// run-dir base (where other runs' HOME and TMPDIR live) is refused with a
// SpecError before bwrap starts, and nothing runs; a workspace beside the
// base is the positive control.
func TestHiddenDirInsideWorkspaceRefused(t *testing.T) {
	t.Parallel()
	root := realTemp(t)
	base := filepath.Join(root, "runs")
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	runs, err := sandbox.RunDirs(base, "r")
	if err != nil {
		t.Fatal(err)
	}
	beside := filepath.Join(root, "ws")
	if err := os.Mkdir(beside, 0o755); err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, sandbox.Config{})
	for _, c := range []struct {
		name, workspace string
		refused         bool
	}{{"contains the run-dir base", root, true}, {"beside it", beside, false}} {
		t.Run(c.name, func(t *testing.T) {
			out, err := sb.Run(t.Context(), sandbox.Spec{Argv: []string{"/bin/sh", "-c", "echo ok"}, Workspace: c.workspace, TmpDir: runs.TmpDir, Home: runs.Home})
			var se *sandbox.SpecError
			if got := errors.As(err, &se); got != c.refused {
				t.Fatalf("refused = %v (err %v, output %q), want %v", got, err, out.Output, c.refused)
			}
			if c.refused && !strings.Contains(se.Reason, "hidden path "+base) {
				t.Errorf("reason %q does not name the hidden path %s", se.Reason, base)
			}
			if !c.refused && !strings.Contains(string(out.Output), "ok") {
				t.Errorf("positive control: output %q", out.Output)
			}
		})
	}
}
