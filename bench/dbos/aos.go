package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storeopen"
)

const aosLogic = "bench"

// aosVariant selects kernel options of an aos system under test.
type aosVariant struct {
	every  bool // Options.CommitEveryStep
	queue  bool // Options.QueueEveryRun
	phases bool // time 0-step runs by phase (-diag)
}

// aosSystem runs the workload on the aos kernel: a worker in this process,
// missions created through the same kernel.
type aosSystem struct {
	st     *countingStore
	k      *kernel.Kernel
	ends   *endSignals
	cancel context.CancelFunc
	done   chan error
	conc   int // the worker's concurrency
}

// openAOS opens (creating and migrating) the database at dsn, a SQLite file
// path or a postgres:// URL, and starts a worker of the given concurrency.
//
// v.every runs the kernel with Options.CommitEveryStep: each step's record in
// its own transaction, as DBOS checkpoints each step, instead of deferring
// the records of re-executable steps (these no-op pure steps) to the run's
// next transaction. v.queue runs it with Options.QueueEveryRun: every run is
// created queued and claimed by the worker after a wake-up, as before the
// hand-off to a local worker.
func openAOS(ctx context.Context, dsn, dataDir string, concurrency int, v aosVariant) (*aosSystem, error) {
	raw, err := storeopen.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	st := &countingStore{Store: raw}
	if v.phases {
		st.phases = &phaseLog{runs: map[string]*phaseMarks{}}
	}
	ends := &endSignals{m: map[string]chan string{}}
	k := kernel.New(st, kernel.Options{DataDir: dataDir, Logger: slog.New(endHandler{ends: ends}), CommitEveryStep: v.every, QueueEveryRun: v.queue})
	s := &aosSystem{st: st, k: k, ends: ends}
	s.start(concurrency)
	return s, nil
}

func (s *aosSystem) start(concurrency int) {
	wctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done, s.conc = cancel, make(chan error, 1), concurrency
	go func() {
		s.done <- s.k.RunWorker(wctx, kernel.WorkerConfig{ID: "bench", Concurrency: concurrency, JanitorEvery: -1,
			Logics: map[string]kernel.Logic{aosLogic: noopLogic}})
	}()
}

// Resize replaces the worker by one of the given concurrency, sizing it
// to the load as DBOS's in-process execution is, unless it has that
// concurrency already. No run may be in flight.
func (s *aosSystem) Resize(concurrency int) error {
	if concurrency == s.conc {
		return nil
	}
	s.cancel()
	if err := <-s.done; err != nil {
		return err
	}
	s.start(concurrency)
	return nil
}

// noopLogic runs input.n no-op pure steps.
func noopLogic(rc kernel.RunContext) (kernel.Result, error) {
	var in struct {
		N int `json:"n"`
	}
	if err := json.Unmarshal(rc.Input(), &in); err != nil {
		return kernel.Result{}, err
	}
	for i := range in.N {
		_, err := rc.Step(kernel.StepSpec{Kind: "noop", Name: "s", Effect: kernel.EffectPure, Request: i},
			func(context.Context, string) (kernel.Outcome, error) { return kernel.Outcome{Result: i}, nil })
		if err != nil {
			return kernel.Result{}, err
		}
	}
	return kernel.Result{Status: kernel.StatusDone}, nil
}

// Run creates a mission of n steps and waits until its final commit landed.
func (s *aosSystem) Run(ctx context.Context, n int) error {
	call := time.Now()
	_, runID, err := s.k.CreateMission(ctx, kernel.MissionSpec{Title: "bench", Logic: aosLogic, Input: map[string]int{"n": n}})
	if err != nil {
		return err
	}
	created := time.Now()
	ch := s.ends.get(runID)
	defer s.ends.forget(runID)
	select {
	case status := <-ch:
		s.st.phases.finish(runID, n == 0, call, created, time.Now())
		if status != kernel.StatusDone {
			return fmt.Errorf("aos run %s ended %s", runID, status)
		}
		return nil
	case <-time.After(runTimeout):
		s.st.phases.finish(runID, false, call, created, time.Now())
		return fmt.Errorf("aos run %s: no \"run ended\" log within %s; did the worker's log text change?", runID, runTimeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the worker and closes the store.
func (s *aosSystem) Close() error {
	s.cancel()
	werr := <-s.done
	if err := s.st.Close(); err != nil {
		return err
	}
	return werr
}

// endSignals hands each run's end, seen in the worker's log, to whoever
// waits for that run. The worker's "run ended" line is written right after
// the run's final commit, so waiting costs no database reads.
type endSignals struct {
	mu sync.Mutex
	m  map[string]chan string // run id → final status; guarded by mu
}

func (e *endSignals) get(runID string) chan string {
	e.mu.Lock()
	defer e.mu.Unlock()
	ch, ok := e.m[runID]
	if !ok {
		ch = make(chan string, 1)
		e.m[runID] = ch
	}
	return ch
}

func (e *endSignals) forget(runID string) {
	e.mu.Lock()
	delete(e.m, runID)
	e.mu.Unlock()
}

// endHandler is the kernel's slog handler: it signals "run ended" lines and
// drops everything else.
type endHandler struct {
	ends  *endSignals
	attrs []slog.Attr
}

func (h endHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h endHandler) Handle(_ context.Context, r slog.Record) error {
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
		h.ends.get(runID) <- status
	}
	return nil
}

func (h endHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return endHandler{ends: h.ends, attrs: append(slices.Clip(h.attrs), as...)}
}

func (h endHandler) WithGroup(string) slog.Handler { return h }

// countingStore counts the kernel's transactions (Tx) and claim attempts
// (ClaimRun and ClaimStart; EndRun and the one-statement creation on
// PostgreSQL are not Tx calls).
type countingStore struct {
	store.Store
	txs    atomic.Int64
	claims atomic.Int64
	phases *phaseLog // -diag: per-phase marks of 0-step runs; nil otherwise
}

func (c *countingStore) Tx(ctx context.Context, fn func(q store.Queries) error) error {
	c.txs.Add(1)
	return c.Store.Tx(ctx, fn)
}

func (c *countingStore) ClaimRun(ctx context.Context, p store.ClaimRunParams) (store.Run, error) {
	c.claims.Add(1)
	return c.Store.ClaimRun(ctx, p)
}

// Counts returns the transactions and claim attempts so far.
func (s *aosSystem) Counts() (txs, claims int64) { return s.st.txs.Load(), s.st.claims.Load() }

// TimePhases turns the per-phase timing of 0-step runs on or off (-diag).
func (s *aosSystem) TimePhases(on bool) {
	if p := s.st.phases; p != nil {
		p.mu.Lock()
		p.nth = 0
		p.mu.Unlock()
		p.on.Store(on)
	}
}

// ReportPhases prints the median phases of the 0-step runs timed.
func (s *aosSystem) ReportPhases(w io.Writer, name string) { s.st.phases.report(w, name) }
