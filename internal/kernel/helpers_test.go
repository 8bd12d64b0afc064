package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestMain(m *testing.M) {
	if role := os.Getenv("AOS_TEST_CHILD"); role != "" {
		os.Exit(runChild(role))
	}
	goleak.VerifyTestMain(m,
		// database/sql's connection opener lives as long as a pool, and pools
		// of the cached test template may outlive a test by design.
		goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
	)
}

// fastOpts are kernel options with short timings, so tests do not wait on
// production lease lengths.
func fastOpts(dataDir string) kernel.Options {
	return kernel.Options{DataDir: dataDir, Lease: 2 * time.Second, Heartbeat: 200 * time.Millisecond,
		CancelPoll: 25 * time.Millisecond, Poll: 20 * time.Millisecond}
}

type bundle struct {
	t   *testing.T
	db  storetest.DB
	k   *kernel.Kernel
	ctx context.Context
}

func setup(t *testing.T, db storetest.DB) *bundle {
	t.Helper()
	return &bundle{t: t, db: db, k: kernel.New(db.Store, fastOpts(t.TempDir())), ctx: context.Background()}
}

// worker runs a worker on k until the test ends or stop is called.
func (b *bundle) worker(k *kernel.Kernel, logics map[string]kernel.Logic) (stop func()) {
	b.t.Helper()
	return b.workerN(k, logics, 4)
}

// workerN is worker with a given concurrency.
func (b *bundle) workerN(k *kernel.Kernel, logics map[string]kernel.Logic, n int) (stop func()) {
	b.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := k.RunWorker(ctx, kernel.WorkerConfig{Concurrency: n, Logics: logics, JanitorEvery: 30 * time.Millisecond}); err != nil {
			b.t.Errorf("worker: %v", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	b.t.Cleanup(stop)
	return stop
}

func (b *bundle) mission(logic string, input any, budget kernel.Budget) (string, string) {
	b.t.Helper()
	mid, rid, err := b.k.CreateMission(b.ctx, kernel.MissionSpec{Title: "test", Logic: logic, Input: input, Budget: budget})
	if err != nil {
		b.t.Fatalf("create mission: %v", err)
	}
	return mid, rid
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		ok, seen := cond()
		if ok {
			return
		}
		last = seen
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s; last seen: %s", d, what, last)
}

func (b *bundle) waitStatus(runID string, want ...string) store.Run {
	b.t.Helper()
	var r store.Run
	waitFor(b.t, 20*time.Second, fmt.Sprintf("run %s in %v", runID, want), func() (bool, string) {
		var err error
		r, err = b.db.Store.GetRun(b.ctx, runID)
		if err != nil {
			return false, err.Error()
		}
		for _, w := range want {
			if r.Status == w {
				return true, ""
			}
		}
		return false, r.Status + " " + r.Error
	})
	return r
}

func (b *bundle) pendingWait(runID string) store.Wait {
	b.t.Helper()
	var w store.Wait
	waitFor(b.t, 20*time.Second, "a pending wait on "+runID, func() (bool, string) {
		ws, err := b.db.Store.ListWaits(b.ctx, store.ListWaitsParams{Status: "pending", RunID: runID})
		if err != nil || len(ws) == 0 {
			return false, fmt.Sprint(err)
		}
		w = ws[0]
		return true, ""
	})
	return w
}

func (b *bundle) steps(runID string) []store.Step {
	b.t.Helper()
	s, err := b.db.Store.ListSteps(b.ctx, runID, -1, 0)
	if err != nil {
		b.t.Fatalf("list steps: %v", err)
	}
	return s
}

// counter counts executions by key; safe for concurrent use.
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func newCounter() *counter { return &counter{n: map[string]int{}} }

func (c *counter) inc(k string) {
	c.mu.Lock()
	c.n[k]++
	c.mu.Unlock()
}

func (c *counter) get(k string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// pure is a step that returns v.
func pure(rc kernel.RunContext, c *counter, name string, v any) (string, error) {
	res, err := rc.Step(kernel.StepSpec{Kind: "test", Name: name, Effect: kernel.EffectPure, Request: name},
		func(ctx context.Context, key string) (kernel.Outcome, error) {
			c.inc(name)
			return kernel.Outcome{Result: v}, nil
		})
	return string(res), err
}

func mustErrIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error = %v, want %v", err, target)
	}
}
