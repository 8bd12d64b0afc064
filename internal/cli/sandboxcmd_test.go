package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
)

// init lets this test binary act as the sandbox probe's inside half (the
// aos binary does it through the hidden "sandbox probe-child" command).
// It is an init rather than a TestMain so that it composes with other
// tests in this package.
func init() {
	if len(os.Args) > 2 && os.Args[1] == "sandbox" && os.Args[2] == "probe-child" {
		os.Exit(sandbox.ProbeChildMain(os.Args[3:]))
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.InitArg { // the warm sandbox's init
		os.Exit(sandbox.InitMain(os.Args[2:]))
	}
}

// runSandboxCmd runs `aos sandbox args...` with an environment naming
// dataDir (the probe verdict's cache) and the process's HOME (the host
// home the sandbox hides).
func runSandboxCmd(t *testing.T, dataDir string, args ...string) (out string, code int, err error) {
	t.Helper()
	code = -1
	cmd := newSandboxCmd(func(c int) { code = c }, "test")
	var b bytes.Buffer
	cmd.SetOut(&b)
	cmd.SetErr(&b)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(withEnv(context.Background(), mapEnv(map[string]string{"AOS_DATA_DIR": dataDir, "HOME": os.Getenv("HOME")})))
	return b.String(), code, err
}

func TestSandboxCheck(t *testing.T) {
	t.Parallel()
	data := t.TempDir() // the probe verdict's cache
	out, _, err := runSandboxCmd(t, data, "check")
	if err != nil {
		t.Fatalf("check failed: %v\n%s", err, out)
	}
	for _, want := range []string{"PASS  write_outside_refused", "PASS  tcp_listener_untouched", "sandbox ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// A second check within the cache's lifetime uses the verdict;
	// --fresh runs the probe again.
	for _, c := range []struct {
		args   []string
		cached bool
	}{{[]string{"check"}, true}, {[]string{"check", "--fresh"}, false}} {
		out, _, err = runSandboxCmd(t, data, c.args...)
		if err != nil || strings.Contains(out, "cached") != c.cached || !strings.Contains(out, "PASS  write_outside_refused") {
			t.Errorf("%v: err %v, want cached %v:\n%s", c.args, err, c.cached, out)
		}
	}
}

// TestSandboxCheckWithoutBwrap: fail closed: without bwrap, check fails
// and says how to fix it.
func TestSandboxCheckWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // sandbox.New finds bwrap with exec.LookPath, which reads the process's PATH
	out, _, err := runSandboxCmd(t, t.TempDir(), "check")
	if err == nil || !strings.Contains(out, "FAIL  bwrap_present") || !strings.Contains(out, "install bubblewrap") {
		t.Errorf("check without bwrap: err %v\n%s", err, out)
	}
}

func TestSandboxExec(t *testing.T) {
	t.Parallel()
	data := t.TempDir() // the probe verdict's cache
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, code, err := runSandboxCmd(t, data, "exec", "--workspace", ws, "--", "/bin/sh", "-c", "echo hi > f; echo out; exit 7")
	if err != nil || code != 7 || !strings.Contains(out, "out") {
		t.Fatalf("exec: code %d err %v out %q", code, err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "f")); string(b) != "hi\n" {
		t.Errorf("workspace write: %q", b)
	}
	outside := t.TempDir()
	_, code, err = runSandboxCmd(t, data, "exec", "--workspace", ws, "--", "/bin/sh", "-c", "echo x > "+outside+"/g")
	if err != nil || code == 0 {
		t.Errorf("write outside: code %d err %v", code, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "g")); !os.IsNotExist(err) {
		t.Error("exec wrote outside the workspace")
	}
	if _, _, err := runSandboxCmd(t, data, "exec", "--network", "lan", "--workspace", ws, "--", "true"); err == nil {
		t.Error("bad network accepted")
	}
}
