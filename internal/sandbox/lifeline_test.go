//go:build linux

package sandbox_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestDeathBeforeGoRunsNothing: a worker SIGKILLed after its sandboxed
// command has started (the lifeline's "ready" arrived) but before it
// wrote "go" leaves nothing behind, and the command never acts. The
// control run, not killed, shows that the command does act.
func TestDeathBeforeGoRunsNothing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		kill bool
	}{{"killed_before_go", true}, {"control_not_killed", false}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := realTemp(t)
			file := filepath.Join(ws, "ran.txt")
			mode := "live"
			if c.kill {
				mode = "kill"
			}
			worker := exec.Command(os.Args[0], "helper", "run-until-go", ws, file, mode)
			worker.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
			if err := worker.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = worker.Process.Kill(); _ = worker.Wait() })
			exited := make(chan error, 1)
			go func() { exited <- worker.Wait() }()
			var err error
			select {
			case err = <-exited:
			case <-time.After(30 * time.Second):
				t.Fatal("worker did not end")
			}
			if !c.kill {
				if err != nil {
					t.Fatalf("worker: %v", err)
				}
				waitFor(t, 5*time.Second, "the control command's file", func() bool { _, err := os.Stat(file); return err == nil })
				return
			}
			// Only the hook, reached between ready and go, kills it.
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("worker ended with %v, want SIGKILL from the hook", err)
			}
			waitFor(t, 5*time.Second, "no process of the command", func() bool { return len(processesWith(file)) == 0 })
			// The command must not act afterwards either.
			deadline := time.Now().Add(3 * time.Second)
			for time.Now().Before(deadline) {
				if _, err := os.Stat(file); err == nil {
					t.Fatalf("the command ran after its worker died before go")
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
