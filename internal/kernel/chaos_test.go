package kernel_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storeopen"
	"github.com/aos-run/aos/internal/store/storetest"
)

// Chaos: the run logic executes in a child process that SIGKILLs itself at
// one step boundary; a second child resumes the run.

var boundaries = []string{"before_intent", "after_intent", "after_exec", "after_commit"}

// appendLine appends one line to a file with O_APPEND, so effects can be
// counted from outside after the child is killed.
func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(line + "\n")
	return err
}

func countLines(t *testing.T, path, want string) int {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if want == "" || sc.Text() == want {
			n++
		}
	}
	return n
}

// chaosLogic is 7 steps mixing every effect class. Effects land in dir.
func chaosLogic(dir string) kernel.Logic {
	return func(rc kernel.RunContext) (kernel.Result, error) {
		var parts []string
		record := func(seq int) { _ = appendLine(filepath.Join(dir, "execs.log"), fmt.Sprint(seq)) }
		steps := []struct {
			spec kernel.StepSpec
			exec kernel.ExecFunc
		}{
			{kernel.StepSpec{Kind: "test", Name: "compute", Effect: kernel.EffectPure, Request: "compute"},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					record(0)
					return kernel.Outcome{Result: 42}, nil
				}},
			{kernel.StepSpec{Kind: "test", Name: "read", Effect: kernel.EffectRead, Request: "read"},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					record(1)
					b, err := os.ReadFile(filepath.Join(dir, "fixture.txt"))
					return kernel.Outcome{Result: string(b)}, err
				}},
			{kernel.StepSpec{Kind: "test", Name: "idem-write", Effect: kernel.EffectIdempotentWrite, Request: "iw"},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					record(2)
					marker := filepath.Join(dir, "iw-"+strings.ReplaceAll(key, "/", "_"))
					f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
					if err == nil {
						f.Close()
						if err := appendLine(filepath.Join(dir, "iw.log"), key); err != nil {
							return kernel.Outcome{}, err
						}
					} else if !errors.Is(err, os.ErrExist) {
						return kernel.Outcome{}, err
					}
					return kernel.Outcome{Result: "written"}, nil
				}},
			{kernel.StepSpec{Kind: "test", Name: "send-probed", Effect: kernel.EffectNonIdempotent, Request: "np",
				Reconcile: func(ctx context.Context, req json.RawMessage, key string) (kernel.ReconcileOutcome, error) {
					b, err := os.ReadFile(filepath.Join(dir, "np.log"))
					if err != nil && !errors.Is(err, os.ErrNotExist) {
						return kernel.ReconcileOutcome{}, err
					}
					if strings.Contains(string(b), key+"\n") {
						return kernel.ReconcileOutcome{Answer: kernel.ReconcileDone, Result: "sent"}, nil
					}
					return kernel.ReconcileOutcome{Answer: kernel.ReconcileNotDone}, nil
				}},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					record(3)
					return kernel.Outcome{Result: "sent"}, appendLine(filepath.Join(dir, "np.log"), key)
				}},
			{kernel.StepSpec{Kind: "model_call", Name: "model", Effect: kernel.EffectModelCall, Request: "m"},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					record(4)
					return kernel.Outcome{Result: "thought", Usage: kernel.Usage{InputTokens: 10, OutputTokens: 5, CostUSD: 0.001}}, nil
				}},
			{kernel.StepSpec{Kind: "test", Name: "send-unprobed", Effect: kernel.EffectNonIdempotent, Request: "nu", AssumedResult: "sent"},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					record(5)
					return kernel.Outcome{Result: "sent"}, appendLine(filepath.Join(dir, "nu.log"), key)
				}},
			// Like git_commit: idempotent by its key, but a second execution
			// answers differently ("nothing to commit"); its probe finds the
			// first execution's effect and result.
			{kernel.StepSpec{Kind: "test", Name: "commit-probed", Effect: kernel.EffectIdempotentWrite, Request: "cp",
				Reconcile: func(ctx context.Context, req json.RawMessage, key string) (kernel.ReconcileOutcome, error) {
					if _, err := os.Stat(filepath.Join(dir, "commit-"+strings.ReplaceAll(key, "/", "_"))); err == nil {
						return kernel.ReconcileOutcome{Answer: kernel.ReconcileDone, Result: "committed"}, nil
					}
					return kernel.ReconcileOutcome{Answer: kernel.ReconcileNotDone}, nil
				}},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					record(6)
					f, err := os.OpenFile(filepath.Join(dir, "commit-"+strings.ReplaceAll(key, "/", "_")), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
					if errors.Is(err, os.ErrExist) {
						return kernel.Outcome{Result: "nothing to commit"}, nil
					}
					if err != nil {
						return kernel.Outcome{}, err
					}
					return kernel.Outcome{Result: "committed"}, f.Close()
				}},
		}
		for _, s := range steps {
			res, err := rc.Step(s.spec, s.exec)
			if err != nil {
				return kernel.Result{}, err
			}
			parts = append(parts, string(res))
		}
		return kernel.Result{Status: kernel.StatusDone, Summary: strings.Join(parts, "|")}, nil
	}
}

// runChild is the child side of every multi-process test.
func runChild(role string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	st, err := storeopen.Open(ctx, os.Getenv("AOS_TEST_DSN"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: open:", err)
		return 2
	}
	defer st.Close()
	// Leases are long, so that a slow heartbeat under -race on a loaded
	// machine never expires one by accident. A resuming child instead runs
	// with its clock AOS_TEST_CLOCK_OFFSET ahead, so the killed child's
	// lease is already past: the expiry is simulated, not waited for.
	opts := kernel.Options{DataDir: os.Getenv("AOS_TEST_DIR"), Lease: 10 * time.Second, Heartbeat: 100 * time.Millisecond,
		CancelPoll: 50 * time.Millisecond, Poll: 20 * time.Millisecond}
	if off, err := time.ParseDuration(os.Getenv("AOS_TEST_CLOCK_OFFSET")); err == nil {
		opts.Now = func() time.Time { return time.Now().Add(off) }
	}
	if kill := os.Getenv("AOS_TEST_KILL"); kill != "" {
		var seq int
		var at string
		fmt.Sscanf(strings.Replace(kill, ":", " ", 1), "%d %s", &seq, &at)
		die := func(b string) func(string, int) {
			return func(_ string, s int) {
				if s == seq && b == at {
					_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
					select {} // never returns
				}
			}
		}
		opts.Hooks = &kernel.Hooks{BeforeIntent: die("before_intent"), AfterIntent: die("after_intent"), AfterExec: die("after_exec"), AfterCommit: die("after_commit")}
	}
	k := kernel.New(st, opts)
	dir := os.Getenv("AOS_TEST_DIR")
	switch role {
	case "chaos":
		// Work until the run ends or waits for the owner.
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- k.RunWorker(wctx, kernel.WorkerConfig{Logics: map[string]kernel.Logic{"chaos": chaosLogic(dir)}, JanitorEvery: -1})
		}()
		runID := os.Getenv("AOS_TEST_RUN")
		for {
			r, err := st.GetRun(ctx, runID)
			stay := os.Getenv("AOS_TEST_STAY") == "1" // work until killed
			if err == nil && (kernel.IsTerminal(r.Status) || r.Status == kernel.StatusWaiting && !stay) {
				cancel()
				<-done
				return 0
			}
			select {
			case <-ctx.Done():
				cancel()
				<-done
				return 1
			case <-time.After(10 * time.Millisecond):
			}
		}
	case "hold":
		// Holds its run's lease (a minute long) inside a step until killed.
		opts.Lease = time.Minute
		k = kernel.New(st, opts)
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			_, err := rc.Step(kernel.StepSpec{Kind: "test", Name: "hold", Effect: kernel.EffectIdempotentWrite, Request: "hold"},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					_ = appendLine(filepath.Join(dir, "holding"), fmt.Sprint(os.Getpid()))
					<-ctx.Done()
					return kernel.Outcome{}, ctx.Err()
				})
			return kernel.Result{Status: kernel.StatusDone}, err
		}
		if err := k.RunWorker(ctx, kernel.WorkerConfig{Logics: map[string]kernel.Logic{"hold": logic}, JanitorEvery: -1}); err != nil {
			return 1
		}
		return 0
	case "holdfar":
		// Holds every run it claims inside a step until killed, with the
		// production lease and heartbeat, as a worker of another host
		// whose process nobody here can check.
		k = kernel.New(st, kernel.Options{DataDir: dir})
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			_, err := rc.Step(kernel.StepSpec{Kind: "test", Name: "hold", Effect: kernel.EffectIdempotentWrite, Request: "hold"},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					_ = appendLine(filepath.Join(dir, "holding"), rc.RunID())
					<-ctx.Done()
					return kernel.Outcome{}, ctx.Err()
				})
			return kernel.Result{Status: kernel.StatusDone}, err
		}
		if err := k.RunWorker(ctx, kernel.WorkerConfig{Concurrency: 8, Hostname: "elsewhere", Logics: map[string]kernel.Logic{"hold": logic}, JanitorEvery: -1}); err != nil {
			return 1
		}
		return 0
	case "pair", "handover":
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			for i := 0; i < 5; i++ {
				_, err := rc.Step(kernel.StepSpec{Kind: "test", Name: "s", Effect: kernel.EffectIdempotentWrite, Request: i},
					func(ctx context.Context, key string) (kernel.Outcome, error) {
						if role == "handover" && i == 2 && os.Getenv("AOS_TEST_BLOCK") == "1" {
							_ = appendLine(filepath.Join(dir, "blocked"), "1")
							<-ctx.Done() // held until shutdown
							return kernel.Outcome{}, ctx.Err()
						}
						start := time.Now().UnixNano()
						time.Sleep(time.Millisecond)
						return kernel.Outcome{Result: i}, appendLine(filepath.Join(dir, "execs.log"), fmt.Sprintf("%s %d %d %d", key, os.Getpid(), start, time.Now().UnixNano()))
					})
				if err != nil {
					return kernel.Result{}, err
				}
			}
			return kernel.Result{Status: kernel.StatusDone}, nil
		}
		// Leases long enough that a slow heartbeat (under -race, two
		// processes on one SQLite file) never expires one: the test is
		// that healthy workers never share a step, not lease expiry.
		opts.Lease = 30 * time.Second
		if role == "handover" {
			opts.Lease = time.Minute // a handover must not wait for expiry
		}
		k = kernel.New(st, opts)
		if err := k.RunWorker(ctx, kernel.WorkerConfig{Concurrency: 4, Logics: map[string]kernel.Logic{role: logic}, JanitorEvery: -1}); err != nil {
			return 1
		}
		return 0
	}
	return 2
}

type child struct {
	cmd  *exec.Cmd
	done chan error
}

func startChild(t *testing.T, role string, env ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"AOS_TEST_CHILD=" + role}, env...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.done
	})
	return c
}

func (c *child) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-c.done:
		c.done <- err
		return err
	case <-time.After(d):
		t.Fatalf("child %v still running after %s", c.cmd.Args, d)
		return nil
	}
}

func killedBySignal(err error) bool {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok {
			return ws.Signaled() && ws.Signal() == syscall.SIGKILL
		}
	}
	return false
}

type chaosRun struct {
	b       *bundle
	dir     string
	rid     string
	env     []string
	resumes int // each resuming child's clock runs a minute further ahead
}

func newChaosRun(t *testing.T, db storetest.DB) *chaosRun {
	b := setup(t, db)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fixture.txt"), []byte("fixture"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, rid := b.mission("chaos", nil, kernel.Budget{})
	return &chaosRun{b: b, dir: dir, rid: rid, env: []string{"AOS_TEST_DSN=" + db.DSN, "AOS_TEST_DIR=" + dir, "AOS_TEST_RUN=" + rid}}
}

func (c *chaosRun) child(t *testing.T, kill string) error {
	env := append([]string(nil), c.env...)
	if kill != "" {
		env = append(env, "AOS_TEST_KILL="+kill)
	} else {
		c.resumes++
		env = append(env, fmt.Sprintf("AOS_TEST_CLOCK_OFFSET=%ds", 60*c.resumes))
	}
	return startChild(t, "chaos", env...).wait(t, 60*time.Second)
}

func (c *chaosRun) result(t *testing.T) store.Run {
	r, err := c.b.db.Store.GetRun(context.Background(), c.rid)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestChaosKillAtEveryStepBoundary(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("chaos spawns ~50 processes per driver")
	}
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		// The uninterrupted run's result is the reference.
		base := newChaosRun(t, db)
		if err := base.child(t, ""); err != nil {
			t.Fatalf("baseline child: %v", err)
		}
		want := base.result(t)
		if want.Status != kernel.StatusDone {
			t.Fatalf("baseline = %s %s", want.Status, want.Error)
		}
		for seq := 0; seq < 7; seq++ {
			for _, at := range boundaries {
				t.Run(fmt.Sprintf("step%d_%s", seq, at), func(t *testing.T) {
					c := newChaosRun(t, storetest.New(t, db.Driver))
					if err := c.child(t, fmt.Sprintf("%d:%s", seq, at)); !killedBySignal(err) {
						t.Fatalf("first child was not killed at %d:%s: %v", seq, at, err)
					}
					if err := c.child(t, ""); err != nil {
						t.Fatalf("resuming child: %v", err)
					}
					got := c.result(t)
					uncertain := seq == 5 && (at == "after_intent" || at == "after_exec")
					if uncertain {
						if got.Status != kernel.StatusWaiting {
							t.Fatalf("status = %s, want waiting on a reconcile question", got.Status)
						}
						w := c.b.pendingWait(c.rid)
						var p struct {
							Reconcile bool     `json:"reconcile"`
							StepSeq   int      `json:"stepSeq"`
							Options   []string `json:"options"`
						}
						if err := json.Unmarshal(w.Payload, &p); err != nil || !p.Reconcile || p.StepSeq != 5 || len(p.Options) != 3 {
							t.Fatalf("reconcile question = %s (%v)", w.Payload, err)
						}
						st, _ := c.b.db.Store.GetStep(context.Background(), c.rid, 5)
						if st.Status != "needs_reconcile" {
							t.Fatalf("step 5 = %s, want needs_reconcile", st.Status)
						}
						if _, err := c.b.k.ResolveWait(context.Background(), w.ID, kernel.ReconcileRan, "owner"); err != nil {
							t.Fatal(err)
						}
						if err := c.child(t, ""); err != nil {
							t.Fatal(err)
						}
						got = c.result(t)
					}
					if got.Status != kernel.StatusDone || string(got.Result) != string(want.Result) {
						t.Fatalf("final = %s %s %s; want %s", got.Status, got.Error, got.Result, want.Result)
					}
					for _, f := range []string{"iw.log", "np.log"} {
						if n := countLines(t, filepath.Join(c.dir, f), ""); n != 1 {
							t.Errorf("%s has %d effects, want exactly 1", f, n)
						}
					}
					// Killed after intent, the effect never happened; the owner
					// said it ran, so it is not run again: 0. Otherwise 1.
					wantNU := 1
					if seq == 5 && at == "after_intent" {
						wantNU = 0
					}
					if n := countLines(t, filepath.Join(c.dir, "nu.log"), ""); n != wantNU {
						t.Errorf("nu.log has %d effects, want %d", n, wantNU)
					}
					for s := 0; s < 5; s++ {
						if n := countLines(t, filepath.Join(c.dir, "execs.log"), fmt.Sprint(s)); n < 1 {
							t.Errorf("step %d executed %d times, want ≥ 1", s, n)
						}
					}
				})
			}
		}
	})
}

func TestChaosReconcileAnswers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		for _, tc := range []struct {
			name     string
			answer   string
			status   string
			nuEffect int
		}{
			{"ran", kernel.ReconcileRan, kernel.StatusDone, 1},     // not run again
			{"rerun", kernel.ReconcileRerun, kernel.StatusDone, 2}, // the owner chose to run it again
			{"abort", kernel.ReconcileAbort, kernel.StatusFailed, 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				c := newChaosRun(t, storetest.New(t, db.Driver))
				if err := c.child(t, "5:after_exec"); !killedBySignal(err) {
					t.Fatalf("not killed: %v", err)
				}
				if err := c.child(t, ""); err != nil {
					t.Fatal(err)
				}
				w := c.b.pendingWait(c.rid)
				if _, err := c.b.k.ResolveWait(context.Background(), w.ID, map[string]string{"answer": tc.answer}, "owner"); err != nil {
					t.Fatal(err)
				}
				if err := c.child(t, ""); err != nil {
					t.Fatal(err)
				}
				got := c.result(t)
				if got.Status != tc.status {
					t.Fatalf("status = %s %s, want %s", got.Status, got.Error, tc.status)
				}
				if n := countLines(t, filepath.Join(c.dir, "nu.log"), ""); n != tc.nuEffect {
					t.Errorf("non-idempotent effect happened %d times, want %d", n, tc.nuEffect)
				}
				if tc.status == kernel.StatusFailed && !strings.Contains(got.Error, "reconcile_abort") {
					t.Errorf("error = %q, want reconcile_abort", got.Error)
				}
			})
		}
	})
}

func TestTwoWorkerProcessesNeverShareAStep(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		dir := t.TempDir()
		var rids []string
		for i := 0; i < 50; i++ {
			_, rid := b.mission("pair", nil, kernel.Budget{})
			rids = append(rids, rid)
		}
		env := []string{"AOS_TEST_DSN=" + db.DSN, "AOS_TEST_DIR=" + dir}
		w1, w2 := startChild(t, "pair", env...), startChild(t, "pair", env...)
		for _, rid := range rids {
			b.waitStatus(rid, kernel.StatusDone, kernel.StatusFailed)
		}
		for _, w := range []*child{w1, w2} {
			_ = w.cmd.Process.Signal(syscall.SIGTERM)
			if err := w.wait(t, 20*time.Second); err != nil {
				t.Errorf("worker exit: %v", err)
			}
		}
		f, err := os.ReadFile(filepath.Join(dir, "execs.log"))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		pids := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSpace(string(f)), "\n") {
			var key, pid string
			var start, end int64
			fmt.Sscanf(line, "%s %s %d %d", &key, &pid, &start, &end)
			seen[key]++
			pids[pid] = true
		}
		if len(seen) != 250 {
			t.Errorf("distinct steps executed = %d, want 250", len(seen))
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("step %s executed %d times", k, n)
			}
		}
		if len(pids) != 2 {
			t.Logf("note: only %d worker process(es) got work", len(pids))
		}
	})
}

func TestGracefulShutdownHandsOverAtOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		dir := t.TempDir()
		_, rid := b.mission("handover", nil, kernel.Budget{})
		env := []string{"AOS_TEST_DSN=" + db.DSN, "AOS_TEST_DIR=" + dir}
		first := startChild(t, "handover", append(env, "AOS_TEST_BLOCK=1")...)
		waitFor(t, 20*time.Second, "the first worker to hold the run", func() (bool, string) {
			_, err := os.Stat(filepath.Join(dir, "blocked"))
			return err == nil, ""
		})
		start := time.Now()
		_ = first.cmd.Process.Signal(syscall.SIGTERM)
		if err := first.wait(t, 20*time.Second); err != nil {
			t.Fatalf("first worker exit: %v", err)
		}
		r, _ := db.Store.GetRun(context.Background(), rid)
		if r.Status != kernel.StatusQueued || r.LeaseOwner != "" {
			t.Fatalf("after shutdown run = %s owner %q, want queued with no lease", r.Status, r.LeaseOwner)
		}
		startChild(t, "handover", env...)
		b.waitStatus(rid, kernel.StatusDone)
		if el := time.Since(start); el > 30*time.Second {
			t.Errorf("handover took %s; the 1-minute lease must not be waited out", el)
		}
		if n := countLines(t, filepath.Join(dir, "execs.log"), ""); n != 5 {
			t.Errorf("steps executed %d times, want 5", n)
		}
	})
}
