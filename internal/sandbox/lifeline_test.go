//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/testbin"
)

// TestDeathBeforeGoRunsNothing: a worker SIGKILLed after its sandboxed
// command has started (the lifeline's "ready" arrived) but before it
// wrote "go" leaves nothing behind, and the command never acts. In
// bwrap_outlives_aos, bwrap is started so that it does not die with the
// worker, as bwrap's child can when aos dies while bwrap starts (it arms
// its parent-death signal only after the fork): only the lifeline then
// stands between the worker's death and the command. The control run, not
// killed, shows that the command does act.
func TestDeathBeforeGoRunsNothing(t *testing.T) {
	t.Parallel()
	realBwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap not installed")
	}
	for _, c := range []struct {
		name     string
		kill     bool
		detached bool
	}{{"killed_before_go", true, false}, {"bwrap_outlives_aos", true, true}, {"control_not_killed", false, false}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := realTemp(t)
			file := filepath.Join(ws, "ran.txt")
			mode := "live"
			if c.kill {
				mode = "kill"
			}
			args := []string{"helper", "run-until-go", ws, file, mode}
			if c.detached {
				args = append(args, detachedBwrap(t, realBwrap))
			}
			worker := exec.Command(os.Args[0], args...)
			// A short TMPDIR: the probe's unix socket path must fit.
			tmp, err := os.MkdirTemp("", "aos-ll-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = os.RemoveAll(tmp) })
			worker.Env = append(os.Environ(), "TMPDIR="+tmp)
			var out bytes.Buffer
			worker.Stdout, worker.Stderr = &out, &out
			if err := worker.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- worker.Wait() }()
			select {
			case err = <-exited:
			case <-time.After(30 * time.Second):
				_ = worker.Process.Kill()
				<-exited
				t.Fatal("worker did not end")
			}
			if !c.kill {
				if err != nil {
					t.Fatalf("worker: %v: %s", err, out.Bytes())
				}
				if _, err := os.Stat(file); err != nil {
					t.Fatalf("the control command did not run: %v; worker: %s", err, out.Bytes())
				}
				return
			}
			// Only the hook, reached between ready and go, kills it.
			var ee *exec.ExitError
			if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("worker ended with %v, want SIGKILL from the hook: %s", err, out.Bytes())
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

// detachedBwrap writes a bwrap stand-in that runs the real one under a
// forked shell, which has no parent-death signal: when the worker dies,
// that shell and so bwrap (--die-with-parent) and its sandbox live on.
func detachedBwrap(t *testing.T, real string) string {
	t.Helper()
	p := filepath.Join(realTemp(t), "bwrap")
	script := "#!/bin/sh\n/bin/sh -c '\"$0\" \"$@\"; exit $?' " + real + " \"$@\" &\nwait $!\n"
	testbin.WriteExecutable(t, p, []byte(script))
	return p
}

// TestCancelBeforeGo: a command cancelled between ready and go never runs
// and its Run ends at once, without the KILL grace.
func TestCancelBeforeGo(t *testing.T) {
	t.Parallel()
	ws := realTemp(t)
	file := filepath.Join(ws, "ran.txt")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sb := newSandbox(t, sandbox.WithBeforeGo(sandbox.Config{}, func(argv []string) {
		if strings.Contains(strings.Join(argv, " "), file) {
			cancel()
		}
	}))
	out, err := sb.Run(ctx, sandbox.Spec{Command: "echo ran > " + file, Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Cancelled || out.ExitCode == 0 {
		t.Errorf("outcome %+v, want cancelled and not run", out)
	}
	if out.Duration >= sandbox.DefaultKillGrace {
		t.Errorf("took %v: the wrapper waited for the KILL grace", out.Duration)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("the command ran after a cancel before go")
	}
}

// TestDescriptorsInside: Spec.ExtraFiles reach the command as 5, 6 and 7
// (5 and 6 with network open, whose block pipe bwrap closes before the
// command), the lifeline's 8 and 9 never do, and a fourth extra file (a
// third with network open) is refused.
func TestDescriptorsInside(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	pipes := func(n int) []*os.File {
		var fs []*os.File
		for range n {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
			fs = append(fs, r)
		}
		return fs
	}
	const list = `for fd in 3 4 5 6 7 8 9; do [ -e /proc/self/fd/$fd ] && printf '%s ' $fd; done; echo`
	cases := []struct {
		name    string
		network sandbox.Network
		extra   int
		want    string
	}{{"no_extra_files", sandbox.NetworkNone, 0, ""}, {"three_extra_files", sandbox.NetworkNone, 3, "5 6 7"}}
	if openNetworkOK() {
		cases = append(cases, struct {
			name    string
			network sandbox.Network
			extra   int
			want    string
		}{"open_two_extra_files", sandbox.NetworkOpen, 2, "5 6"})
	}
	for _, c := range cases {
		out, err := st.sb.Run(t.Context(), sandbox.Spec{Command: list, Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home, Network: c.network, ExtraFiles: pipes(c.extra)})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := strings.TrimSpace(string(out.Output)); got != c.want {
			t.Errorf("%s: open descriptors %q, want %q", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		network sandbox.Network
		n       int
	}{{sandbox.NetworkNone, 4}, {sandbox.NetworkOpen, 3}} {
		_, err := st.sb.Run(t.Context(), sandbox.Spec{Command: "true", Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home, Network: c.network, ExtraFiles: pipes(c.n)})
		var se *sandbox.SpecError
		if !errors.As(err, &se) {
			t.Errorf("%s, %d extra files: err %v, want *SpecError", c.network, c.n, err)
		}
	}
}
