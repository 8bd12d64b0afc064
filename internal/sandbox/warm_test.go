//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

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

// hostPIDsWith lists host processes whose command line contains marker,
// or whose working directory is dir (when dir is not "").
func hostPIDsWith(marker, dir string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == strconv.Itoa(os.Getpid()) {
			continue
		}
		st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(st), ')'); i < 0 || i+2 >= len(st) || st[i+2] == 'Z' {
			continue // gone, or a zombie
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if (marker != "" && strings.Contains(string(cmd), marker)) || (dir != "" && cwd == dir) {
			out = append(out, e.Name()+" "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}

func TestWarmKillsWhatACommandLeaves(t *testing.T) {
	st := newSetup(t)
	w := newWarm(t, st)
	ctx := context.Background()
	marker := "4242" + strconv.Itoa(os.Getpid())
	// In the background, in a new session (out of the command's group),
	// with TERM ignored: the cold path's PID namespace would take it.
	out, err := w.Run(ctx, st.warmSpec("trap '' TERM; setsid sleep "+marker+" >/dev/null 2>&1 & nohup sleep "+marker+" >/dev/null 2>&1 & echo started"))
	if err != nil || out.ExitCode != 0 {
		t.Fatalf("%v %+v", err, out)
	}
	if left := hostPIDsWith("sleep\x00"+marker, ""); len(left) > 0 {
		t.Fatalf("processes the command left still run after it: %v", left)
	}
	// The box is still the same (a clean end does not restart it), and
	// inside it only pid 1, the init and the command itself are seen.
	out, err = w.Run(ctx, st.warmSpec("echo /proc/[0-9]*")) // bash expands it itself: no other process
	if err != nil || len(strings.Fields(string(out.Output))) != 3 {
		t.Errorf("processes seen in the sandbox: %q (%v), want 3 (pid 1, the init, the command)", out.Output, err)
	}
	if n := sandbox.WarmStarts(w); n != 1 {
		t.Errorf("%d sandboxes started, want 1", n)
	}
}

func TestWarmTimeoutCancelAndOutputCapEndTheBox(t *testing.T) {
	st := newSetup(t)
	w := newWarm(t, st)
	marker := "4343" + strconv.Itoa(os.Getpid())
	cases := []struct {
		name  string
		spec  sandbox.Spec
		ctx   func() (context.Context, context.CancelFunc)
		check func(sandbox.Outcome) bool
	}{
		{"timeout", sandbox.Spec{Command: "trap '' TERM; setsid sleep " + marker + " & sleep " + marker, Timeout: 300 * time.Millisecond},
			func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			func(o sandbox.Outcome) bool { return o.TimedOut }},
		{"cancel", sandbox.Spec{Command: "sleep " + marker},
			func() (context.Context, context.CancelFunc) {
				// Cancelled once the command runs: a cancel before it
				// started (a slow start) ends it with no signal to see.
				ctx, cancel := context.WithCancel(context.Background())
				go func() {
					deadline := time.Now().Add(10 * time.Second)
					for ctx.Err() == nil && time.Now().Before(deadline) && len(hostPIDsWith("sleep\x00"+marker, "")) == 0 {
						time.Sleep(10 * time.Millisecond)
					}
					cancel()
				}()
				return ctx, cancel
			},
			func(o sandbox.Outcome) bool { return o.Cancelled && o.Signal == "SIGTERM" }},
		{"output cap", sandbox.Spec{Command: "setsid sleep " + marker + " & yes"},
			func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) },
			func(o sandbox.Outcome) bool { return o.OutputExceeded && len(o.Output) == sandbox.DefaultOutputCap }},
	}
	for i, c := range cases {
		spec := st.warmSpec("")
		spec.Command, spec.Timeout = c.spec.Command, c.spec.Timeout
		ctx, cancel := c.ctx()
		start := time.Now()
		out, err := w.Run(ctx, spec)
		cancel()
		if err != nil || !c.check(out) {
			t.Errorf("%s: %v %+v", c.name, err, sandbox.Outcome{ExitCode: out.ExitCode, Signal: out.Signal, TimedOut: out.TimedOut, Cancelled: out.Cancelled, OutputExceeded: out.OutputExceeded})
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%s: took %s", c.name, d)
		}
		if left := hostPIDsWith("sleep\x00"+marker, ""); len(left) > 0 {
			t.Errorf("%s: processes left running: %v", c.name, left)
		}
		out, err = w.Run(context.Background(), st.warmSpec("echo next"))
		if err != nil || string(out.Output) != "next\n" {
			t.Errorf("%s: the next command: %v %q", c.name, err, out.Output)
		}
		_ = i
	}
}

func TestWarmInitKilledByACommandRestartsConfined(t *testing.T) {
	st := newSetup(t)
	w := newWarm(t, st)
	ctx := context.Background()
	// The init is pid 2 inside (bwrap's pid 1 starts it); a command may
	// kill it, which ends the box and everything in it.
	out, err := w.Run(ctx, st.warmSpec("kill -9 2; sleep 5; echo survived"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out.Output), "survived") || out.ExitCode == 0 {
		t.Errorf("the command outlived its init: %+v %q", out.ExitCode, out.Output)
	}
	for i := 0; i < 2; i++ {
		out, err = w.Run(ctx, st.warmSpec("cat "+filepath.Join(st.home, ".ssh", "id_rsa")+"; echo x > "+filepath.Join(st.outside, "g")+"; echo ran"))
		if err != nil || !strings.Contains(string(out.Output), "ran") || strings.Contains(string(out.Output), "CANARY") {
			t.Fatalf("after the init died: %v %q", err, out.Output)
		}
	}
	if _, err := os.Stat(filepath.Join(st.outside, "g")); err == nil {
		t.Error("a command wrote outside after the init died")
	}
	if n := sandbox.WarmStarts(w); n != 2 {
		t.Errorf("%d sandboxes started, want 2 (one restart)", n)
	}
}

func TestWarmRunsCannotSeeEachOther(t *testing.T) {
	a, b := newSetup(t), newSetup(t)
	// Both runs' dirs under one base, as the engine makes them.
	base := filepath.Dir(a.run.Root)
	rb, err := sandbox.RunDirs(base, "other")
	if err != nil {
		t.Fatal(err)
	}
	b.run = rb
	writeFile(t, filepath.Join(b.run.TmpDir, "b-secret"), "B-RUN-CANARY")
	wa, wb := newWarm(t, a), newWarm(t, b)
	markerB := "4444" + strconv.Itoa(os.Getpid())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = wb.Run(ctx, b.warmSpec("sleep "+markerB))
	}()
	waitFor(t, 10*time.Second, "run B's command", func() bool { return len(hostPIDsWith("sleep\x00"+markerB, "")) > 0 })
	out, err := wa.Run(context.Background(), a.warmSpec("echo MARKER-A; cat /proc/[0-9]*/cmdline | tr '\\0' ' '; echo; cat "+filepath.Join(b.run.TmpDir, "b-secret")+"; ls "+filepath.Dir(b.run.Root)))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out.Output)
	if !strings.Contains(s, "MARKER-A") || !strings.Contains(s, "__sandbox-init") {
		t.Fatalf("positive control: run A does not see its own processes: %q", s)
	}
	if strings.Contains(s, markerB) || strings.Contains(s, "B-RUN-CANARY") {
		t.Errorf("run A sees run B's processes or files: %q", s)
	}
	cancel()
	<-done
}

// TestWarmFallsBackToTheColdPath: a spec that cannot share the box runs
// cold (no box started, the command still confined and run), and a spec
// with other mounts replaces the box.
func TestWarmFallsBackToTheColdPath(t *testing.T) {
	st := newSetup(t)
	other := realTemp(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	cases := []struct {
		name   string
		spec   func() sandbox.Spec
		starts int
	}{
		{"extra files", func() sandbox.Spec { s := st.warmSpec("echo ok"); s.ExtraFiles = []*os.File{w}; return s }, 0},
		{"no run dirs", func() sandbox.Spec { s := st.warmSpec("echo ok"); s.TmpDir, s.Home = "", ""; return s }, 0},
		{"warm", func() sandbox.Spec { return st.warmSpec("echo ok") }, 1},
		{"another workspace", func() sandbox.Spec { s := st.warmSpec("echo ok"); s.Workspace = other; return s }, 2},
	}
	wm := newWarm(t, st)
	for _, c := range cases {
		out, err := wm.Run(context.Background(), c.spec())
		if err != nil || string(out.Output) != "ok\n" {
			t.Errorf("%s: %v %q", c.name, err, out.Output)
		}
		if n := sandbox.WarmStarts(wm); n != c.starts {
			t.Errorf("%s: %d boxes started, want %d", c.name, n, c.starts)
		}
	}
}
