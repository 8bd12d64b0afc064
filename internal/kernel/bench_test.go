package kernel_test

// Kernel benchmarks of issue 2, each on both drivers (sub-benchmarks
// "sqlite" and "postgres"; PostgreSQL through AOS_TEST_POSTGRES_URL, skipped
// without it):
//
//	go test -run '^$' -bench . -benchtime 2s ./internal/kernel
//
// The workload is a run of N no-op pure steps. A run counts as finished when
// its final commit has landed: the benchmarks learn it from the worker's
// "run ended" log line, written right after that commit, so that waiting
// for runs adds no database reads. bench/README.md has the latest figures;
// bench/dbos compares the same workload with DBOS Transact Go.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storeopen"
	"github.com/aos-run/aos/internal/store/storetest"
)

const (
	benchLogicName = "bench"
	// benchSteps is N, the steps of a run in the overhead and throughput
	// benchmarks.
	benchSteps = 10
	// benchRunTimeout bounds the wait for one run: a hang fails the
	// benchmark instead of the test binary's timeout.
	benchRunTimeout = 60 * time.Second
)

// benchProbe observes runs from outside the kernel: when a run's first step
// starts executing, and when the worker logged its end.
type benchProbe struct {
	mu   sync.Mutex
	runs map[string]*probeRun // run id → what was seen; guarded by mu
}

type probeRun struct {
	first     chan time.Time // receives when step 0's exec starts; buffered
	ended     chan string    // receives the run's final status; buffered
	firstOnce sync.Once
}

func newBenchProbe() *benchProbe { return &benchProbe{runs: map[string]*probeRun{}} }

// run returns the record of runID, creating it: the worker can see a run
// before CreateMission has returned its id.
func (p *benchProbe) run(runID string) *probeRun {
	p.mu.Lock()
	defer p.mu.Unlock()
	r, ok := p.runs[runID]
	if !ok {
		r = &probeRun{first: make(chan time.Time, 1), ended: make(chan string, 1)}
		p.runs[runID] = r
	}
	return r
}

func (p *benchProbe) forget(runID string) {
	p.mu.Lock()
	delete(p.runs, runID)
	p.mu.Unlock()
}

// probeHandler is the kernel's slog handler in benchmarks: it turns the
// worker's "run ended" line into a signal.
type probeHandler struct {
	p     *benchProbe
	attrs []slog.Attr
}

func (h probeHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h probeHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "run ended" {
		return nil
	}
	var runID, status string
	see := func(a slog.Attr) bool {
		switch a.Key {
		case "run":
			runID = a.Value.String()
		case "status":
			status = a.Value.String()
		}
		return true
	}
	for _, a := range h.attrs {
		see(a)
	}
	r.Attrs(see)
	if runID != "" {
		h.p.run(runID).ended <- status
	}
	return nil
}

func (h probeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return probeHandler{p: h.p, attrs: append(slices.Clip(h.attrs), as...)}
}

func (h probeHandler) WithGroup(string) slog.Handler { return h }

// benchLogic runs input.n no-op pure steps.
func benchLogic(p *benchProbe) kernel.Logic {
	return func(rc kernel.RunContext) (kernel.Result, error) {
		var in struct {
			N int `json:"n"`
		}
		if err := json.Unmarshal(rc.Input(), &in); err != nil {
			return kernel.Result{}, err
		}
		for i := range in.N {
			_, err := rc.Step(kernel.StepSpec{Kind: "noop", Name: "s", Effect: kernel.EffectPure, Request: i},
				func(context.Context, string) (kernel.Outcome, error) {
					if i == 0 {
						r := p.run(rc.RunID())
						r.firstOnce.Do(func() { r.first <- time.Now() })
					}
					return kernel.Outcome{Result: i}, nil
				})
			if err != nil {
				return kernel.Result{}, err
			}
		}
		return kernel.Result{Status: kernel.StatusDone}, nil
	}
}

// benchEnv is a kernel with a running worker of the bench logic, and a
// kernel that creates missions (the same one, or another over its own
// store handle, as another process would).
type benchEnv struct {
	b       *testing.B
	ctx     context.Context
	worker  *kernel.Kernel
	creator *kernel.Kernel
	probe   *benchProbe
}

// newBenchEnv opens a fresh database of driver and starts a worker of the
// given concurrency. With remote, missions are created through a second
// store handle and kernel, so that the worker learns of them only by the
// store's doorbell (PostgreSQL NOTIFY) or its poll, as across processes.
func newBenchEnv(b *testing.B, driver string, concurrency int, remote bool, poll time.Duration) *benchEnv {
	b.Helper()
	return newBenchEnvQueue(b, driver, concurrency, remote, poll, false)
}

// newBenchEnvQueue is newBenchEnv with kernel.Options.QueueEveryRun set to
// queue: every run queued and claimed, never handed off.
func newBenchEnvQueue(b *testing.B, driver string, concurrency int, remote bool, poll time.Duration, queue bool) *benchEnv {
	b.Helper()
	db := storetest.New(b, driver)
	p := newBenchProbe()
	opts := kernel.Options{DataDir: b.TempDir(), Poll: poll, Logger: slog.New(probeHandler{p: p}), QueueEveryRun: queue}
	wk := kernel.New(db.Store, opts)
	e := &benchEnv{b: b, ctx: context.Background(), worker: wk, creator: wk, probe: p}
	if remote {
		st, err := storeopen.Open(e.ctx, db.DSN)
		if err != nil {
			b.Fatalf("open second store handle: %v", err)
		}
		b.Cleanup(func() { _ = st.Close() })
		e.creator = kernel.New(st, kernel.Options{DataDir: b.TempDir(), Poll: poll})
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- wk.RunWorker(ctx, kernel.WorkerConfig{ID: "bench", Concurrency: concurrency,
			Logics: map[string]kernel.Logic{benchLogicName: benchLogic(p)}, JanitorEvery: -1})
	}()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("worker: %v", err)
		}
	})
	e.mustRun(benchSteps) // warm up: connections, statement caches, first claim
	return e
}

// create enqueues a mission whose root run has n steps.
func (e *benchEnv) create(n int) (string, error) {
	_, runID, err := e.creator.CreateMission(e.ctx, kernel.MissionSpec{Title: "bench", Logic: benchLogicName, Input: map[string]int{"n": n}})
	if err != nil {
		return "", fmt.Errorf("create mission: %w", err)
	}
	return runID, nil
}

// wait waits until the run's final commit landed and checks it is done.
func (e *benchEnv) wait(runID string) error {
	r := e.probe.run(runID)
	defer e.probe.forget(runID)
	select {
	case status := <-r.ended:
		if status != kernel.StatusDone {
			run, _ := e.worker.GetRun(e.ctx, runID)
			return fmt.Errorf("run %s ended %s: %s", runID, status, run.Error)
		}
		return nil
	case <-time.After(benchRunTimeout):
		run, err := e.worker.GetRun(e.ctx, runID)
		return fmt.Errorf("run %s: no \"run ended\" log within %s (status %q, err %v); did the worker's log text change?", runID, benchRunTimeout, run.Status, err)
	}
}

// run creates a run of n steps and waits for it to end.
func (e *benchEnv) run(n int) error {
	runID, err := e.create(n)
	if err != nil {
		return err
	}
	return e.wait(runID)
}

// mustRun is run for the benchmark's own goroutine.
func (e *benchEnv) mustRun(n int) {
	e.b.Helper()
	if err := e.run(n); err != nil {
		e.b.Fatal(err)
	}
}

// BenchmarkStepOverhead measures the cost of one step in a sequential run:
// (time of a 10-step run − time of a 0-step run) / 10, both timed from
// CreateMission to the run's final commit.
func BenchmarkStepOverhead(b *testing.B) {
	for _, driver := range storetest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			e := newBenchEnv(b, driver, 1, false, 0)
			var d0, dN time.Duration
			iters := 0
			for b.Loop() {
				t0 := time.Now()
				e.mustRun(0)
				t1 := time.Now()
				e.mustRun(benchSteps)
				d0 += t1.Sub(t0)
				dN += time.Since(t1)
				iters++
			}
			perStep := (dN - d0) / time.Duration(iters*benchSteps)
			b.ReportMetric(float64(perStep.Nanoseconds())/1e3, "us/step")
			b.ReportMetric(float64(d0.Nanoseconds())/1e6/float64(iters), "ms/run0")
			b.ReportMetric(float64(dN.Nanoseconds())/1e6/float64(iters), fmt.Sprintf("ms/run%d", benchSteps))
		})
	}
}

// BenchmarkZeroStepRun times a 0-step run from CreateMission to its final
// commit, handed off to the creating process's worker (create and end: two
// commits) and queued then claimed (kernel.Options.QueueEveryRun: create,
// claim, end), alternating one of each per iteration on two databases so
// that load drift hits both alike. It reports the median of each and their
// ratio.
func BenchmarkZeroStepRun(b *testing.B) {
	for _, driver := range storetest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			handed := newBenchEnvQueue(b, driver, 1, false, 0, false)
			queued := newBenchEnvQueue(b, driver, 1, false, 0, true)
			var dh, dq []time.Duration
			for b.Loop() {
				t0 := time.Now()
				handed.mustRun(0)
				t1 := time.Now()
				queued.mustRun(0)
				dh, dq = append(dh, t1.Sub(t0)), append(dq, time.Since(t1))
			}
			med := func(xs []time.Duration) float64 {
				slices.Sort(xs)
				return float64(xs[len(xs)/2].Nanoseconds()) / 1e6
			}
			h, q := med(dh), med(dq)
			b.ReportMetric(h, "ms-handed")
			b.ReportMetric(q, "ms-queued")
			b.ReportMetric(h/q, "handed/queued")
		})
	}
}

// BenchmarkThroughput measures steps per second with 8 and 32 concurrent
// runs: as many clients, each creating a 10-step run and waiting for it,
// over and over, against a worker of that concurrency. One iteration is
// four runs per client.
func BenchmarkThroughput(b *testing.B) {
	const runsPerClient = 4
	for _, driver := range storetest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			for _, c := range []int{8, 32} {
				b.Run(fmt.Sprintf("c%d", c), func(b *testing.B) {
					e := newBenchEnv(b, driver, c, false, 0)
					var elapsed time.Duration
					runs := 0
					for b.Loop() {
						t0 := time.Now()
						var wg sync.WaitGroup
						errs := make(chan error, c)
						for range c {
							wg.Go(func() {
								for range runsPerClient {
									if err := e.run(benchSteps); err != nil {
										errs <- err
										return
									}
								}
							})
						}
						wg.Wait()
						close(errs)
						if err := <-errs; err != nil {
							b.Fatal(err)
						}
						elapsed += time.Since(t0)
						runs += c * runsPerClient
					}
					b.ReportMetric(float64(runs*benchSteps)/elapsed.Seconds(), "steps/s")
					b.ReportMetric(float64(runs)/elapsed.Seconds(), "runs/s")
				})
			}
		})
	}
}

// BenchmarkEnqueueToClaim measures the latency from CreateMission to the
// start of the run's first step's exec, on an idle worker: "local" creates
// through the worker's own kernel, whose in-process bell wakes the worker;
// "remote" creates through another store handle and kernel, as another
// process would, so that the worker wakes on PostgreSQL's NOTIFY doorbell or,
// on SQLite, on its poll (Options.Poll, 100 ms here; 1 s by default).
func BenchmarkEnqueueToClaim(b *testing.B) {
	for _, driver := range storetest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			for _, remote := range []bool{false, true} {
				name := map[bool]string{false: "local", true: "remote"}[remote]
				b.Run(name, func(b *testing.B) {
					e := newBenchEnv(b, driver, 4, remote, 100*time.Millisecond)
					var lat []time.Duration
					for b.Loop() {
						if remote {
							// Let the worker fall idle, its poll timer at a
							// random phase, as a mission arriving from
							// elsewhere finds it.
							time.Sleep(rand.N(100 * time.Millisecond))
						}
						t0 := time.Now()
						runID, err := e.create(1)
						if err != nil {
							b.Fatal(err)
						}
						select {
						case t1 := <-e.probe.run(runID).first:
							lat = append(lat, t1.Sub(t0))
						case <-time.After(benchRunTimeout):
							b.Fatalf("run %s: first step not started within %s", runID, benchRunTimeout)
						}
						if err := e.wait(runID); err != nil {
							b.Fatal(err)
						}
					}
					slices.Sort(lat)
					pct := func(p int) float64 {
						i := min(len(lat)-1, len(lat)*p/100)
						return float64(lat[i].Nanoseconds()) / 1e6
					}
					b.ReportMetric(pct(50), "ms-p50")
					b.ReportMetric(pct(99), "ms-p99")
					b.ReportMetric(float64(len(lat)), "samples")
				})
			}
		})
	}
}
