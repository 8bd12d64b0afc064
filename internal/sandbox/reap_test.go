//go:build linux

package sandbox_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/sandbox"
)

// ownPidsCgroup is this process's cgroup v1 pids directory, or "" when
// cgroups cannot be used here.
func ownPidsCgroup(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) == 3 && parts[1] == "pids" {
			d := filepath.Join("/sys/fs/cgroup/pids", parts[2])
			if os.Geteuid() == 0 {
				return d
			}
		}
	}
	return ""
}

// deadPID returns the pid of a process that has ended and been reaped.
func deadPID(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

// TestReapOrphans: a process left in the per-command cgroup of an aos that
// died (a survivor of kill -9 while bwrap was starting) is killed and its
// cgroup removed; one in the cgroup of a live aos process is left alone.
func TestReapOrphans(t *testing.T) {
	parent := ownPidsCgroup(t)
	if parent == "" {
		t.Skip("needs root and a cgroup v1 pids hierarchy")
	}
	orphan := func(owner int) (*exec.Cmd, string) {
		d := filepath.Join(parent, fmt.Sprintf("aos-sandbox-%d-%d", owner, time.Now().UnixNano()))
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Skipf("cannot make a cgroup here: %v", err)
		}
		c := exec.Command("sleep", "300")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait(); _ = os.Remove(d) })
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(fmt.Sprint(c.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
		return c, d
	}
	live := exec.Command("sleep", "300") // stands in for a live aos process
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = live.Process.Kill(); _ = live.Wait() })

	survivor, deadDir := orphan(deadPID(t))
	kept, liveDir := orphan(live.Process.Pid)
	exited := make(chan error, 1)
	go func() { exited <- survivor.Wait() }()

	sb, err := sandbox.New(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	sb.ReapOrphans()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the dead aos's survivor is still running after ReapOrphans")
	}
	if _, err := os.Stat(deadDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the dead aos's cgroup %s was not removed: %v", deadDir, err)
	}
	if err := kept.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("a live aos's command was killed: %v", err)
	}
	if _, err := os.Stat(liveDir); err != nil {
		t.Errorf("a live aos's cgroup was removed: %v", err)
	}
}
