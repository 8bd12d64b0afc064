//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
)

// TestSpecHide: a directory in Spec.Hide is empty inside (another
// project's files unread), while the workspace and an exposed path inside
// it are mounted back.
func TestSpecHide(t *testing.T) {
	t.Parallel()
	root := realTemp(t)
	projects := filepath.Join(root, "projects")
	ws := filepath.Join(projects, "mine")
	other := filepath.Join(projects, "other")
	tool := filepath.Join(projects, "tools", "engine.txt")
	for _, d := range []string{ws, other, filepath.Dir(tool), filepath.Join(root, "runs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(other, "secret.txt"), "OTHER-PROJECT-CANARY")
	writeFile(t, filepath.Join(ws, "main.go"), "WORKSPACE-OK")
	writeFile(t, tool, "EXPOSED-OK")
	runs, err := sandbox.RunDirs(filepath.Join(root, "runs"), "r")
	if err != nil {
		t.Fatal(err)
	}
	sb := newSandbox(t, sandbox.Config{})
	cmd := fmt.Sprintf("cat %q; echo ls=$(ls -A %q); cat main.go %q; echo new > new && echo wrote; echo x > %q/x || echo refused", filepath.Join(other, "secret.txt"), projects, tool, projects)
	for _, c := range []struct {
		name         string
		hide, expose []string
		want, not    []string
	}{
		{"hidden", []string{projects}, []string{tool}, []string{"ls=mine tools\n", "WORKSPACE-OK", "EXPOSED-OK", "wrote", "refused"}, []string{"OTHER-PROJECT-CANARY"}},
		// The control shows projects (exposed, in case the temp dir lies
		// in a dir the sandbox hides anyway, such as HOME).
		{"not hidden", nil, []string{projects}, []string{"OTHER-PROJECT-CANARY", "ls=mine other tools\n"}, nil},
	} {
		out, err := sb.Run(t.Context(), sandbox.Spec{Command: cmd, Workspace: ws, TmpDir: runs.TmpDir, Home: runs.Home, Hide: c.hide, Expose: c.expose})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s := string(out.Output)
		for _, w := range c.want {
			if !strings.Contains(s, w) {
				t.Errorf("%s: want %q in %s", c.name, w, s)
			}
		}
		for _, n := range c.not {
			if strings.Contains(s, n) {
				t.Errorf("%s: %q readable: %s", c.name, n, s)
			}
		}
	}
	if _, err := sb.Run(t.Context(), sandbox.Spec{Command: "true", Workspace: ws, Hide: []string{"relative"}}); err == nil {
		t.Error("a relative Hide path was accepted")
	}
}

// TestSpecPrivateTmp: with PrivateTmp, /tmp is empty and writable (host
// files under /tmp unseen, nothing written reaches the host), and the
// workspace and an exposed program under /tmp are still there; without
// it, /tmp is read-only.
func TestSpecPrivateTmp(t *testing.T) {
	t.Parallel()
	root := realTemp(t)
	if !strings.HasPrefix(root, "/tmp/") {
		t.Skipf("the test's temp dir %s is not under /tmp", root)
	}
	ws := filepath.Join(root, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	hostFile := filepath.Join(root, "host.txt")
	writeFile(t, hostFile, "HOST-TMP-CANARY")
	prog := filepath.Join(root, "prog.sh")
	writeFile(t, prog, "echo PROGRAM-OK")
	lock := filepath.Join("/tmp", "aos-private-tmp-test-"+filepath.Base(root))
	sb := newSandbox(t, sandbox.Config{})
	cmd := fmt.Sprintf("cat %q; sh %q; mkdir %q && echo made; echo ws > ws.txt && echo wsok", hostFile, prog, lock)
	for _, c := range []struct {
		private bool
		want    []string
		not     []string
	}{
		{true, []string{"PROGRAM-OK", "made", "wsok"}, []string{"HOST-TMP-CANARY"}},
		{false, []string{"PROGRAM-OK", "wsok"}, []string{"made"}},
	} {
		out, err := sb.Run(t.Context(), sandbox.Spec{Command: cmd, Workspace: ws, PrivateTmp: c.private, Expose: []string{prog}})
		if err != nil {
			t.Fatal(err)
		}
		s := string(out.Output)
		for _, w := range c.want {
			if !strings.Contains(s, w) {
				t.Errorf("private %v: want %q in %s", c.private, w, s)
			}
		}
		for _, n := range c.not {
			if strings.Contains(s, n) {
				t.Errorf("private %v: %q in %s", c.private, n, s)
			}
		}
		if _, err := os.Stat(lock); err == nil {
			os.Remove(lock)
			t.Errorf("private %v: the command's /tmp dir reached the host", c.private)
		}
	}
}
