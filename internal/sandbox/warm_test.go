//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
)

// newWarm returns a warm sandbox on st's sandbox, closed at cleanup.
func newWarm(t *testing.T, st setup) *sandbox.Warm {
	t.Helper()
	w := st.sb.NewWarm()
	t.Cleanup(w.Close)
	return w
}

// warmSpec is a shell command in st's workspace with the run's dirs.
func (st setup) warmSpec(cmd string) sandbox.Spec {
	return sandbox.Spec{Command: cmd, Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home}
}

func TestWarmRunsEachCommandInOneSandbox(t *testing.T) {
	st := newSetup(t)
	w := newWarm(t, st)
	ctx := context.Background()
	for i, c := range []struct {
		cmd      string
		code     int
		contains string
	}{
		{"echo hello; id -u; pwd", 0, "hello\n1000\n" + st.workspace + "\n"},
		{"exit 3", 3, ""},
		{"echo ws > in-ws && cat in-ws", 0, "ws\n"},
		{"cat " + filepath.Join(st.home, ".ssh", "id_rsa"), 1, "No such file"},
		{"echo x > " + filepath.Join(st.outside, "f"), 1, "Read-only file system"},
		{"env | sort", 0, "PWD=" + st.workspace + "\n"},
		{"nonexistent-program-xyz", 127, "not found"},
	} {
		out, err := w.Run(ctx, st.warmSpec(c.cmd))
		if err != nil {
			t.Fatalf("%d %q: %v", i, c.cmd, err)
		}
		if out.ExitCode != c.code || !strings.Contains(string(out.Output), c.contains) {
			t.Errorf("%d %q: exit %d, output %q; want exit %d containing %q", i, c.cmd, out.ExitCode, out.Output, c.code, c.contains)
		}
	}
	if n := sandbox.WarmStarts(w); n != 1 {
		t.Errorf("%d sandboxes started for the run's commands, want 1", n)
	}
	if _, err := os.Stat(filepath.Join(st.outside, "f")); err == nil {
		t.Error("a file was written outside the writable roots")
	}
}
