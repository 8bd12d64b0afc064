package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// Phases of one aos run, start to durable end, as -diag times them from the
// harness (create) and from the store calls the kernel makes (claim, end):
//
//	create  CreateMission's call until it returns (the insert's commit)
//	wake    CreateMission returned → the successful claim statement begins
//	        (the worker's wake-up; 0 when the creation hands the run to a
//	        local worker directly, see claim; slightly negative when the
//	        woken worker's claim begins before CreateMission returns)
//	claim   the claim-and-start statement and journal load (store.ClaimStart),
//	        or nothing when the run was created already claimed
//	run     claim done (or creation done) → the end statement begins: the
//	        worker's bookkeeping around the run's logic
//	end     the end statement (store.EndRun), the run's final commit
//	signal  the end statement returned → the harness sees "run ended"
const (
	phCreate = iota
	phWake
	phClaim
	phRun
	phEnd
	phSignal
	nPhases
)

var phaseNames = [nPhases]string{"create", "wake", "claim", "run", "end", "signal"}

// phaseMarks are the instants of one run: call, created, claim begin,
// claim end, end begin, end end, signalled.
type phaseMarks [7]time.Time

// phaseLog collects phase marks per run id. Nil-safe: a nil log records
// nothing.
type phaseLog struct {
	on    atomic.Bool // timing now (the sequential phase)
	mu    sync.Mutex
	runs  map[string]*phaseMarks // guarded by mu
	spans []timedRun
	nth   int // runs finished since timing was turned on; guarded by mu
}

// timedRun is one run's phases and its place among the runs of its
// sequential phase (1 = the first after the worker was sized for it).
type timedRun struct {
	span [nPhases]time.Duration
	nth  int
}

func (p *phaseLog) mark(runID string, i int, t time.Time) {
	if p == nil || runID == "" || !p.on.Load() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.runs[runID]
	if m == nil {
		m = &phaseMarks{}
		p.runs[runID] = m
	}
	m[i] = t
}

// finish forgets a run's marks and, when keep is set and timing is on,
// turns them into spans.
func (p *phaseLog) finish(runID string, keep bool, call, created, signalled time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	m := p.runs[runID]
	delete(p.runs, runID)
	if !keep || !p.on.Load() {
		return
	}
	p.nth++
	if m == nil {
		m = &phaseMarks{}
	}
	m[0], m[1], m[6] = call, created, signalled
	if m[2].IsZero() { // created already claimed: no claim statement
		m[2], m[3] = m[1], m[1]
	}
	if m[4].IsZero() || m[5].IsZero() {
		return // ended through a transaction, not EndRun: not this workload
	}
	var s [nPhases]time.Duration
	for i := range nPhases {
		s[i] = m[i+1].Sub(m[i])
	}
	p.spans = append(p.spans, timedRun{span: s, nth: p.nth})
}

// report prints the median of each phase over the runs seen.
func (p *phaseLog) report(w io.Writer, name string) {
	if p == nil || len(p.spans) == 0 {
		return
	}
	line := fmt.Sprintf("  %-36s", name)
	var total time.Duration
	for i := range nPhases {
		xs := make([]time.Duration, len(p.spans))
		for j, s := range p.spans {
			xs[j] = s.span[i]
		}
		slices.Sort(xs)
		total += xs[len(xs)/2]
		line += fmt.Sprintf(" %s %.3f", phaseNames[i], float64(xs[len(xs)/2].Nanoseconds())/1e6)
	}
	fmt.Fprintf(w, "%s  (sum %.3f ms, %d runs)\n", line, float64(total.Nanoseconds())/1e6, len(p.spans))
	// The slowest runs, phase by phase: where a tail comes from.
	slow := slices.Clone(p.spans)
	sum := func(s [nPhases]time.Duration) (t time.Duration) {
		for _, d := range s {
			t += d
		}
		return t
	}
	slices.SortFunc(slow, func(a, b timedRun) int { return int(sum(b.span) - sum(a.span)) })
	for _, s := range slow[:min(3, len(slow))] {
		line := fmt.Sprintf("  %-36s", "  slowest")
		for i := range nPhases {
			line += fmt.Sprintf(" %s %.3f", phaseNames[i], float64(s.span[i].Nanoseconds())/1e6)
		}
		fmt.Fprintf(w, "%s  (sum %.3f ms, run %d of its phase)\n", line, float64(sum(s.span).Nanoseconds())/1e6, s.nth)
	}
}

// ClaimStart marks the successful claim statement's begin and end.
func (c *countingStore) ClaimStart(ctx context.Context, p store.ClaimRunParams) (store.Run, []store.Step, error) {
	c.claims.Add(1)
	t := time.Now()
	r, steps, err := c.Store.ClaimStart(ctx, p)
	if err == nil {
		c.phases.mark(r.ID, 2, t)
		c.phases.mark(r.ID, 3, time.Now())
	}
	return r, steps, err
}

// EndRun marks the end statement's begin and end.
func (c *countingStore) EndRun(ctx context.Context, p store.SetRunStateParams, m store.UpdateMissionStatusParams, e store.Event) error {
	t := time.Now()
	err := c.Store.EndRun(ctx, p, m, e)
	if err == nil {
		c.phases.mark(p.Fence.RunID, 4, t)
		c.phases.mark(p.Fence.RunID, 5, time.Now())
	}
	return err
}
