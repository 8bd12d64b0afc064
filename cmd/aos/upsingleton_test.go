package main_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSecondUpRefused: a second `aos up` on a data dir that a live aos up
// holds mints no setup token, starts nothing, names the live one and exits
// non-zero; the first keeps serving with its setup token. When the holder is
// killed with SIGKILL, the lock is the kernel's to drop, and the next aos up
// starts.
func TestSecondUpRefused(t *testing.T) {
	bin := buildAOS(t)
	addr := freeAddr(t)
	dataDir, ws := t.TempDir(), t.TempDir()+"/workspaces"
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + dataDir, "AOS_ADDR=" + addr,
		"AOS_WORKSPACE_ROOT=" + ws, "AOS_LOG_LEVEL=warn"}
	first := start(t, bin, env, "up")
	var seen strings.Builder
	first.expect(t, regexp.MustCompile(`projects live under `+regexp.QuoteMeta(ws)), &seen)
	tok := first.expect(t, regexp.MustCompile(`setup token: (aos_setup_\S+)`), &seen)[1]
	waitHealthy(t, "http://"+addr, &seen)
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		t.Fatalf("aos up did not create the workspace root %s: %v", ws, err)
	}

	want := fmt.Sprintf("aos is already running at http://%s (pid %d)", addr, first.cmd.Process.Pid)
	if code, out := runBounded(t, bin, env, "up"); code == 0 || !strings.Contains(out, want) || strings.Contains(out, "aos_setup_") {
		t.Fatalf("second aos up: exit %d, want non-zero with %q and no setup token:\n%s", code, want, out)
	}
	// The live server's setup token still works: the second one minted none.
	c := &upClient{t: t, base: "http://" + addr}
	c.do("POST", "/auth/setup/begin", map[string]string{"setupToken": tok}, 200, nil)

	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.exit(t)
	// Its children die with it (TestUpChildrenDieWithIt); wait for the port.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		l, err := net.Listen("tcp", addr)
		if err == nil {
			l.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("port %s still held after the first aos up was killed", addr)
		}
	}
	third := start(t, bin, env, "up")
	var seen3 strings.Builder
	third.expect(t, regexp.MustCompile(`up on `), &seen3)
	waitHealthy(t, "http://"+addr, &seen3)
}

// TestUpPortTaken: aos up on an address another program listens on says so
// and exits non-zero before minting a setup token or starting children.
func TestUpPortTaken(t *testing.T) {
	bin := buildAOS(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + t.TempDir(), "AOS_ADDR=" + l.Addr().String(),
		"AOS_WORKSPACE_ROOT=" + t.TempDir(), "AOS_LOG_LEVEL=warn"}
	if code, out := runBounded(t, bin, env, "up"); code == 0 || !strings.Contains(out, "cannot listen on "+l.Addr().String()) || strings.Contains(out, "aos_setup_") {
		t.Fatalf("aos up on a taken port: exit %d:\n%s", code, out)
	}
}

// runBounded runs bin to its end, or for at most 30 s (a refusal is quick;
// an aos up that wrongly starts would run forever), and returns its exit
// code (-1 when it had to be killed) and combined output.
func runBounded(t *testing.T, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return -1, string(out)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}
