package tool_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/testbin"
)

// TestUnprivileged re-runs the shell and path tests as uid 65534 when the
// suite runs as root (as in CI), so both cases are covered in one run.
func TestUnprivileged(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("already unprivileged: the other tests cover this case")
	}
	if testing.Short() {
		t.Skip("short mode")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) not installed: cannot drop to an unprivileged user")
	}
	if probe := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--", "bwrap", "--unshare-user", "--ro-bind", "/", "/", "true"); probe.Run() != nil {
		t.Skip("bwrap cannot create a user namespace as uid 65534 here (unprivileged user namespaces disabled?)")
	}
	// Not t.TempDir: its parent is 0700 and uid 65534 must traverse it.
	dir, err := os.MkdirTemp("", "aos-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "tool.test")
	testbin.CopyExecutable(t, bin, os.Args[0])
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--",
		bin, "-test.run", "^Test(Shell|ShellFailsClosed|ShellProtectedPathsWhetherOrNotTheyExist|ResolvePath|ProtectedPathsUnwritable|EditStaleness|FileToolsContainedUnderRenameExchange|NonRegularFilesRefusedPromptly|SymlinksInsideWorkspace|WriteReplayAfterCrash)$", "-test.count=1", "-test.v")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + tmp, "TMPDIR=" + tmp}
	cmd.Dir = tmp
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("unprivileged run failed: %v\n%s", err, b)
	}
	for _, want := range []string{"--- PASS: TestShell ", "--- PASS: TestShellFailsClosed", "--- PASS: TestProtectedPathsUnwritable", "--- PASS: TestFileToolsContainedUnderRenameExchange", "--- PASS: TestShellProtectedPathsWhetherOrNotTheyExist"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("unprivileged run lacks %q:\n%s", want, b)
		}
	}
}
