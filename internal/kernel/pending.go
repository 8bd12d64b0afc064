package kernel

import (
	"context"
	"errors"
	"sort"

	"github.com/aos-run/aos/internal/store"
)

// Deferred records: the results of steps that may run again after a crash
// (pure, read, model_call and idempotent_write steps, probed or not) and
// the internal steps (now, uuid, emit, owner_messages) are not committed on
// their own. They wait in the run's pending list and are written, in seq
// order and before anything else, by the run's next transaction: an intent,
// a non_idempotent result, a wait, a sleep, the run's end or its release,
// or the commit a LiveAnnounce step makes first (liveAnnounceStep).
//
// The journal is therefore always a prefix of what the run did (a record
// commits only with, or after, every record before it), so replay after a
// crash re-executes only the unrecorded tail, and that tail holds only
// steps whose re-execution is harmless. The invariants of seed §2 hold: an
// effect's intent commits before the effect runs, and that commit carries
// every result the decision to run it was based on; a non_idempotent
// result commits at once; a probed idempotent_write found started after a
// crash is settled by its probe. A lost lease drops the pending records:
// the new holder re-executes (or probes) those steps.

// pendingRecord is one deferred write.
type pendingRecord struct {
	seq    int
	status string // the step's status once written: completed or failed
	usd    float64
	write  func(ctx context.Context, q store.Queries) error
	// live, when set, returns transient copies of the events write
	// persists, for a LiveAnnounce (liveAnnounce); announced says they
	// were emitted.
	live      func() []liveCopy
	announced bool
	// commitFirst: a LiveAnnounce step commits the pending records
	// before it runs instead of announcing them (liveAnnounceStep).
	commitFirst bool
}

// deferRecord appends a write to the pending list (with
// Options.CommitEveryStep, it commits it at once).
func (rc *runCtx) deferRecord(p pendingRecord) error {
	rc.mu.Lock()
	rc.pending = append(rc.pending, p)
	rc.mu.Unlock()
	if rc.k.opts.CommitEveryStep {
		return rc.flush(rc.ctx)
	}
	return nil
}

// afterRecord calls the AfterRecord hook.
func (rc *runCtx) afterRecord(seq int, kind, name string) {
	if h := rc.k.opts.Hooks; h != nil && h.AfterRecord != nil {
		h.AfterRecord(rc.run.ID, seq, kind, name)
	}
}

// hasPending reports whether records wait for the run's next transaction.
func (rc *runCtx) hasPending() bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.pending) > 0
}

// pendingUSD is the spend recorded by pending records, not yet in the
// database's daily total.
func (rc *runCtx) pendingUSD() float64 {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var usd float64
	for _, p := range rc.pending {
		usd += p.usd
	}
	return usd
}

// tx runs fn in a transaction that first writes the pending records, after
// a fencing check. It retries passing faults like Kernel.tx.
func (rc *runCtx) tx(ctx context.Context, fn func(q store.Queries) error) error {
	return rc.txRows(ctx, nil, fn)
}

// txRows is tx for a transaction that also inserts rows, new step rows
// that nothing in it reads (an intent's started row): with pending
// records, they join the pending records' rows in one statement, written
// before fn runs; without, they are inserted after fn.
func (rc *runCtx) txRows(ctx context.Context, rows []store.Step, fn func(q store.Queries) error) error {
	own := fn
	if len(rows) > 0 {
		own = func(q store.Queries) error {
			if err := fn(q); err != nil {
				return err
			}
			return q.InsertSteps(ctx, rows)
		}
	}
	// One transaction of the run at a time, so that two never write the
	// same pending records (steps started by Go commit concurrently).
	rc.txMu.Lock()
	defer rc.txMu.Unlock()
	rc.mu.Lock()
	pend := append([]pendingRecord(nil), rc.pending...)
	rc.mu.Unlock()
	if len(pend) == 0 {
		return rc.k.tx(ctx, own)
	}
	err := rc.k.tx(ctx, func(q store.Queries) error {
		cancel, err := q.FenceRun(ctx, rc.fence, rc.k.now(), 0)
		if err != nil {
			return err
		}
		bq := &batchedSteps{Queries: q}
		for _, p := range pend {
			if err := p.write(ctx, bq); err != nil {
				return err
			}
		}
		if err := q.InsertSteps(ctx, append(bq.steps, rows...)); err != nil {
			return err
		}
		return fn(fencedQueries{Queries: q, fence: rc.fence, cancel: cancel})
	})
	if errors.Is(err, store.ErrConflict) && rc.landed(ctx, pend) {
		// A retried commit whose first attempt landed: the pending
		// records are written. fn runs alone and meets its own record.
		rc.dropPending(pend)
		rc.k.ring()
		return rc.k.tx(ctx, own)
	}
	if err != nil {
		return err
	}
	rc.dropPending(pend)
	return nil
}

// batchedSteps are the queries pending records are written with: the
// step rows they insert (the internal steps', and those of steps whose
// intent was not recorded) wait, in order, and are inserted by one
// statement after the last record, before the transaction's own work. A
// pending record never reads a step, nor finishes one another pending
// record inserts (a finished step's row is its intent's, committed
// before), so only the number of statements changes.
type batchedSteps struct {
	store.Queries
	steps []store.Step
}

func (q *batchedSteps) InsertStep(_ context.Context, s store.Step) error {
	q.steps = append(q.steps, s)
	return nil
}

// fencedQueries are a transaction's queries after its fencing check.
// The check holds the run's row until commit (PostgreSQL: FOR NO KEY
// UPDATE; SQLite: the write lock), so checking the same fence again in
// that transaction would read the same row: FenceRun answers from the
// first check, and saves the round trip (one per intent or result that
// commits with pending records, two per agent turn).
type fencedQueries struct {
	store.Queries
	fence  store.Fence
	cancel bool
}

func (q fencedQueries) FenceRun(ctx context.Context, f store.Fence, now, leaseUntil int64) (bool, error) {
	if f == q.fence && leaseUntil == 0 {
		return q.cancel, nil
	}
	return q.Queries.FenceRun(ctx, f, now, leaseUntil)
}

// flush writes the pending records in a transaction of their own.
func (rc *runCtx) flush(ctx context.Context) error {
	rc.mu.Lock()
	n := len(rc.pending)
	rc.mu.Unlock()
	if n == 0 {
		return nil
	}
	err := rc.tx(ctx, func(store.Queries) error { return nil })
	if err != nil {
		return err
	}
	rc.k.ring()
	return nil
}

// landed reports whether pend was written by an earlier attempt: they
// commit together, so the last one's row says.
func (rc *runCtx) landed(ctx context.Context, pend []pendingRecord) bool {
	last := pend[len(pend)-1]
	s, err := rc.k.st.GetStep(ctx, rc.run.ID, last.seq)
	return err == nil && s.Status == last.status
}

// dropPending removes written records from the pending list; records
// deferred meanwhile (by concurrent steps) stay. Once the run announces
// steps live, the written records not announced yet keep copies of their
// events for the next LiveAnnounce (read from the list itself, in the same
// critical section, so a record announced meanwhile is not copied twice).
func (rc *runCtx) dropPending(written []pendingRecord) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.liveUsed {
		for _, p := range rc.pending[:len(written)] {
			if !p.announced && p.live != nil {
				rc.addLiveLocked(p.live()...)
			}
		}
	}
	rc.pending = rc.pending[len(written):]
	if len(rc.pending) == 0 {
		rc.pending = nil
	}
}

// deferrable reports whether a step's result may wait for the run's next
// commit: its step may run again after a crash (it is not
// non_idempotent). A probed step (an idempotent_write with a probe, such
// as write_file) is one: its intent committed before it ran, so a crash
// before the next commit finds it started and its probe settles it, as a
// crash between its exec and its own commit did; the next decision's
// commit carries its result.
func deferrable(spec StepSpec) bool {
	return spec.Effect != EffectNonIdempotent
}

// liveAnnounceStep announces a LiveAnnounce step about to run. When a
// pending record is a model call's result (costly to run again, and what
// a timeline shows of the model's turn) or a wait's or a timer's outcome
// (an owner's answer), the pending records commit first, in a transaction
// of their own that also sees a cancel request (as an intent's did): a run
// of turns without tool calls, or an answered question, is journaled and
// shown as before. Otherwise (a turn's tool results, its steering read)
// they are announced live (liveAnnounce) and commit with the run's next
// transaction, the next tool's intent.
func (rc *runCtx) liveAnnounceStep(seq int, started TransientEvent) error {
	rc.mu.Lock()
	rc.liveUsed = true // what this flush writes is copied too
	commit := false
	for _, p := range rc.pending {
		commit = commit || p.commitFirst
	}
	rc.mu.Unlock()
	if commit {
		err := rc.tx(rc.ctx, func(q store.Queries) error { return rc.fenceNotCancelled(q, seq, rc.k.now()) })
		if err := rc.cancelledErr(err); err != nil {
			return err
		}
		if err != nil {
			return err
		}
		rc.k.ring()
	}
	rc.liveAnnounce(started)
	return nil
}

// liveAnnounce emits, for a LiveAnnounce step about to run, transient
// copies of the run's step events since its last LiveAnnounce, in seq
// order: those committed meanwhile (an intent's step.started, a result's
// step.completed) and those of the pending records. Then started. The
// transient path is ordered, the persisted one is slower and not ordered
// with it, so a live timeline that places the step after these copies
// shows what the run did before the step, then the step, although part of
// it has not committed (the pending records persist with the run's next
// transaction). A watcher knows a copy's persisted event by (run, seq,
// kind).
func (rc *runCtx) liveAnnounce(started TransientEvent) {
	rc.mu.Lock()
	evs := rc.live
	rc.live, rc.liveUsed = nil, true
	for i := range rc.pending {
		p := &rc.pending[i]
		if p.announced || p.live == nil {
			continue
		}
		p.announced = true
		evs = append(evs, p.live()...)
	}
	rc.mu.Unlock()
	// Steps started by Go record their copies after their commits, in
	// any order; a step's started comes before its completion.
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].seq < evs[j].seq })
	for _, c := range evs {
		rc.k.emitTransient(c.ev)
	}
	rc.k.emitTransient(started)
}

// liveCopy is a transient copy of a step event, with its step's seq.
type liveCopy struct {
	seq int
	ev  TransientEvent
}

// maxLiveCopies bounds the committed step events a run keeps for its next
// LiveAnnounce (a logic that announces live once, then runs many steps
// without, keeps the newest): well under a subscriber's 256-event buffer,
// so the step.started that follows them is not the event it drops.
const maxLiveCopies = 64

// committedLive records copies of step events just committed, for the
// next LiveAnnounce (once the run has made one).
func (rc *runCtx) committedLive(evs ...liveCopy) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.liveUsed {
		rc.addLiveLocked(evs...)
	}
}

// addLiveLocked appends copies to rc.live, keeping the newest
// maxLiveCopies; rc.mu is held.
func (rc *runCtx) addLiveLocked(evs ...liveCopy) {
	rc.live = append(rc.live, evs...)
	if n := len(rc.live) - maxLiveCopies; n > 0 {
		rc.live = append(rc.live[:0], rc.live[n:]...)
	}
}
