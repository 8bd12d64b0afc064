//go:build linux

package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
)

func TestRunDirsPersistAcrossCommands(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	base := realTemp(t)
	p, err := sandbox.RunDirs(base, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"echo one > $TMPDIR/a; echo two > $HOME/b", "cat $TMPDIR/a $HOME/b"} {
		out, err := st.sb.Run(t.Context(), sandbox.Spec{Command: cmd, Workspace: st.workspace, TmpDir: p.TmpDir, Home: p.Home})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(cmd, "cat") && string(out.Output) != "one\ntwo\n" {
			t.Errorf("output %q", out.Output)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(p.Home, "b")); string(b) != "two\n" {
		t.Errorf("home file %q", b)
	}
	for _, bad := range []string{"", "../x", "a/b", ".."} {
		if _, err := sandbox.RunDirs(base, bad); err == nil {
			t.Errorf("run id %q accepted", bad)
		}
	}
}
