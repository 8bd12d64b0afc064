//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/sandbox"
)

// setup is what a sandbox test needs: an admitted sandbox, a workspace, a
// fake host home with a planted secret and a host dir outside every
// writable root.
type setup struct {
	sb        *sandbox.Sandbox
	workspace string
	home      string // the host home the sandbox protects
	outside   string // a host dir outside the writable roots
	run       sandbox.RunPaths
}

func newSetup(t *testing.T) setup {
	t.Helper()
	root := realTemp(t)
	st := setup{
		workspace: filepath.Join(root, "ws"),
		home:      filepath.Join(root, "home"),
		outside:   filepath.Join(root, "outside"),
	}
	for _, d := range []string{st.workspace, filepath.Join(st.home, ".ssh"), st.outside, filepath.Join(root, "runs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(st.home, ".ssh", "id_rsa"), "PRIVATE-KEY-CANARY")
	writeFile(t, filepath.Join(st.home, "notes.txt"), "public notes")
	// The run's TMPDIR and HOME, as the engine makes them: their base is
	// hidden from commands, the test's other dirs are not.
	run, err := sandbox.RunDirs(filepath.Join(root, "runs"), "test")
	if err != nil {
		t.Fatal(err)
	}
	st.run = run
	st.sb = newSandbox(t, sandbox.Config{HostHome: st.home})
	return st
}

func newSandbox(t *testing.T, cfg sandbox.Config) *sandbox.Sandbox {
	t.Helper()
	if cfg.StateDir == "" {
		cfg.StateDir = realTemp(t)
	}
	s, err := sandbox.New(cfg)
	if err != nil {
		t.Fatalf("new sandbox: %v", err)
	}
	return s
}

// realTemp is t.TempDir resolved to its real path.
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sh runs a shell command in the setup's workspace.
func (st setup) sh(t *testing.T, net sandbox.Network, cmd string) sandbox.Outcome {
	t.Helper()
	out, err := st.sb.Run(context.Background(), sandbox.Spec{Command: cmd, Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home, Network: net, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("run %q: %v", cmd, err)
	}
	return out
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
		<-tick.C
	}
}

// processesWith lists host pids whose command line contains marker.
func processesWith(marker string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// commandsStarting lists host pids whose command line starts with prefix.
func commandsStarting(prefix string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(b), prefix) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// needOpenNetwork skips a test of network open where this user cannot
// open /dev/net/tun (slirp4netns needs it; Run then fails closed with an
// *UnavailableError, which TestOpenNetworkFailsClosed checks).
func needOpenNetwork(t *testing.T) {
	t.Helper()
	if !openNetworkOK() {
		t.Skipf("network open unavailable to uid %d: /dev/net/tun cannot be opened", os.Getuid())
	}
}

// networks are the modes this user can test: open only with /dev/net/tun.
func networks(t *testing.T) []sandbox.Network {
	if openNetworkOK() {
		return []sandbox.Network{sandbox.NetworkNone, sandbox.NetworkOpen}
	}
	t.Logf("network open unavailable to uid %d (/dev/net/tun): testing none only", os.Getuid())
	return []sandbox.Network{sandbox.NetworkNone}
}

func openNetworkOK() bool {
	f, err := os.OpenFile("/dev/net/tun", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	_ = f.Close()
	return true
}
