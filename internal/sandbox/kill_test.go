//go:build linux

package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/sandbox"
)

func TestTimeoutKillsTrappedSetsidChildren(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	marker := fmt.Sprintf("%d.%d", time.Now().UnixNano()%100000, os.Getpid())
	// The parent shell and a setsid'd, nohup'd grandchild both ignore TERM
	// and hold the output pipe.
	cmd := fmt.Sprintf(`trap "" TERM; setsid nohup sh -c 'trap "" TERM; exec sleep 1%s' >/dev/null 2>&1 & echo started; while :; do sleep 1%s; done`, marker, marker)
	start := time.Now()
	type result struct {
		out sandbox.Outcome
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := st.sb.Run(context.Background(), sandbox.Spec{Command: cmd, Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home, Timeout: 500 * time.Millisecond})
		done <- result{out, err}
	}()
	var out sandbox.Outcome
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		out = r.out
	case <-time.After(500*time.Millisecond + sandbox.DefaultKillGrace + 5*time.Second):
		t.Fatalf("Run still running long after timeout and grace; processes: %v", processesWith(marker))
	}
	if !out.TimedOut {
		t.Errorf("TimedOut false: %+v", out)
	}
	if el := time.Since(start); el > 500*time.Millisecond+sandbox.DefaultKillGrace+3*time.Second {
		t.Errorf("Run took %v", el)
	}
	if !strings.Contains(string(out.Output), "started") {
		t.Errorf("output %q", out.Output)
	}
	waitFor(t, 5*time.Second, "no process with marker "+marker, func() bool { return len(processesWith(marker)) == 0 })
}

func TestCancelKillsEverything(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	marker := fmt.Sprintf("2%d", time.Now().UnixNano()%100000)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	done := make(chan sandbox.Outcome, 1)
	go func() {
		out, _ := st.sb.Run(ctx, sandbox.Spec{Command: "sleep 3" + marker + " & wait", Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home})
		done <- out
	}()
	// Match the sleep itself ("sleep\x00<n>"), not bwrap's command line.
	waitFor(t, 10*time.Second, "sleep to start", func() bool { return len(processesWith("sleep\x003"+marker)) > 0 })
	cancelled := time.Now()
	cancel()
	select {
	case out := <-done:
		// From the cancel, not out.Duration, which counts the sandbox's
		// setup too: a TERM that reached the command ends it at once.
		if el := time.Since(cancelled); el >= sandbox.DefaultKillGrace {
			t.Errorf("cancel needed the KILL grace (%v after the cancel): TERM did not reach the command", el)
		}
		if !out.Cancelled {
			t.Errorf("Cancelled false: %+v", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	waitFor(t, 5*time.Second, "sleep to die", func() bool { return len(processesWith("3"+marker)) == 0 })
}

func TestOutputCapExact(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	for _, c := range []struct {
		n        int
		exceeded bool
	}{{sandbox.DefaultOutputCap, false}, {sandbox.DefaultOutputCap + 1, true}, {5 * sandbox.DefaultOutputCap, true}} {
		cmd := fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a", c.n)
		if c.exceeded {
			cmd += "; sleep 30" // only the cap's kill can end it in time
		}
		out := st.sh(t, sandbox.NetworkNone, cmd)
		want := min(c.n, sandbox.DefaultOutputCap)
		if len(out.Output) != want || out.OutputExceeded != c.exceeded {
			t.Errorf("n=%d: got %d bytes exceeded=%v, want %d exceeded=%v", c.n, len(out.Output), out.OutputExceeded, want, c.exceeded)
		}
		if len(bytes.Trim(out.Output, "a")) != 0 {
			t.Errorf("n=%d: unexpected bytes in output", c.n)
		}
		if out.TimedOut {
			t.Errorf("n=%d: timed out instead of being killed at the cap", c.n)
		}
	}
}

func TestSymlinkedWritableRootRefused(t *testing.T) {
	t.Parallel()
	st := newSetup(t)
	link := filepath.Join(st.outside, "link")
	if err := os.Symlink(st.workspace, link); err != nil {
		t.Fatal(err)
	}
	insideSSH := filepath.Join(st.home, ".ssh", "project")
	if err := os.MkdirAll(insideSSH, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []sandbox.Spec{
		{Command: "true", Workspace: link},
		{Command: "true", Workspace: "relative/path"},
		{Command: "true", Workspace: st.workspace, TmpDir: link},
		{Command: "true", Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home, Network: "lan"},
		{Command: "true", Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home, Env: map[string]string{"ANTHROPIC_API_KEY": "x"}},
		{Command: "true", Workspace: filepath.Join(st.home, ".ssh")},
		{Command: "true", Workspace: insideSSH}, // inside a protected dir: its cover would hide it
		{Command: "true", Workspace: st.home},   // a protected dir inside the workspace
	} {
		_, err := st.sb.Run(t.Context(), spec)
		var se *sandbox.SpecError
		if !errors.As(err, &se) {
			t.Errorf("%+v: err %v, want *SpecError", spec, err)
		}
	}
	// Positive control.
	if _, err := st.sb.Run(t.Context(), sandbox.Spec{Command: "true", Workspace: st.workspace, TmpDir: st.run.TmpDir, Home: st.run.Home}); err != nil {
		t.Errorf("positive control: %v", err)
	}
}

func TestFailClosed(t *testing.T) {
	ws := realTemp(t)
	marker := filepath.Join(ws, "ran")
	cases := []struct {
		name string
		cfg  func(t *testing.T) sandbox.Config
	}{
		{"bwrap hidden from PATH", func(t *testing.T) sandbox.Config {
			t.Setenv("PATH", t.TempDir()) // sandbox.New finds bwrap with exec.LookPath, which reads the process's PATH
			return sandbox.Config{}
		}},
		{"probe made to fail", func(t *testing.T) sandbox.Config {
			return sandbox.Config{ProbeCommand: []string{"/bin/true"}}
		}},
		{"probe check fails", func(t *testing.T) sandbox.Config {
			// Hiding the workspace breaks the positive control.
			return sandbox.Config{ProbeCommand: []string{"/bin/sh", "-c", "echo 'AOS-PROBE-RESULT [{\"name\":\"x\",\"ok\":false}]'"}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newSandbox(t, c.cfg(t))
			_, err := s.Run(t.Context(), sandbox.Spec{Command: "touch " + marker, Workspace: ws})
			var ue *sandbox.UnavailableError
			if !errors.As(err, &ue) || ue.Fix == "" {
				t.Fatalf("err %v, want *UnavailableError with a fix", err)
			}
			if _, err := os.Stat(marker); !os.IsNotExist(err) {
				t.Fatalf("command ran despite failed probe")
			}
			t.Logf("error: %v", err)
		})
	}
}

// TestWorkerDeathKillsJob: when the worker is SIGKILLed, everything it
// started for the sandbox dies too, bwrap included: during a command
// (network none and open, whose slirp4netns must go too) and during the
// canary probe.
func TestWorkerDeathKillsJob(t *testing.T) {
	t.Parallel()
	for i, mode := range []string{"none", "open", "probe"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			if mode == "open" {
				needOpenNetwork(t)
			}
			marker := fmt.Sprintf("3%d%d", i, time.Now().UnixNano()%100000)
			worker := exec.Command(os.Args[0], "helper", "run-sleep", marker, mode)
			worker.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
			if err := worker.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = worker.Process.Kill(); _ = worker.Wait() })
			waitFor(t, 20*time.Second, "sandboxed sleep to start", func() bool { return len(commandsStarting("sleep\x00"+marker)) > 0 })
			// Everything the worker started: bwrap (whose command line
			// holds the marker) and its direct children such as
			// slirp4netns.
			children := childrenOf(worker.Process.Pid)
			if len(processesWith(marker)) < 3 {
				t.Fatalf("want bwrap and sleep with the marker, got %v", processesWith(marker))
			}
			if mode == "open" && !hasCommand(children, "slirp4netns") {
				t.Fatalf("no slirp4netns among the worker's children %v", children)
			}
			if err := worker.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = worker.Wait()
			waitFor(t, 5*time.Second, "the job to die with its worker", func() bool {
				return len(processesWith(marker)) == 0 && len(alive(children)) == 0
			})
			// Its per-command cgroups are swept by the next sandbox.
			left := func() []string {
				m, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/*/aos-sandbox-%d-*", worker.Process.Pid))
				m2, _ := filepath.Glob(fmt.Sprintf("/sys/fs/cgroup/*/*/*/aos-sandbox-%d-*", worker.Process.Pid))
				return append(m, m2...)
			}
			_ = newSandbox(t, sandbox.Config{})
			if l := left(); len(l) > 0 {
				t.Errorf("cgroups left behind: %v", l)
			}
		})
	}
}

// childrenOf lists pid's direct children as "pid starttime comm".
func childrenOf(pid int) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... field 22 is the start time.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		comm := string(b[bytes.IndexByte(b, '(')+1 : i])
		if len(f) > 19 && f[1] == fmt.Sprint(pid) {
			out = append(out, e.Name()+" "+f[19]+" "+comm)
		}
	}
	return out
}

func hasCommand(procs []string, comm string) bool {
	for _, p := range procs {
		if strings.HasSuffix(p, " "+comm) {
			return true
		}
	}
	return false
}

// alive lists the entries of procs (from childrenOf) whose pid still runs
// with the same start time, zombies excluded.
func alive(procs []string) []string {
	var out []string
	for _, p := range procs {
		f := strings.Fields(p)
		b, err := os.ReadFile(filepath.Join("/proc", f[0], "stat"))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		st := strings.Fields(string(b[i+1:]))
		if len(st) > 19 && st[19] == f[1] && st[0] != "Z" {
			out = append(out, p)
		}
	}
	return out
}
