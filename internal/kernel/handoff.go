package kernel

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// Hand-off: a mission created in a process that runs a worker with a free
// slot for its logic is inserted already claimed by that worker (status
// running, the worker's lease and holder, fencing token 1, started, with
// mission.created and run.claimed) in the creation's one commit, and given
// to the worker in memory. A 0-step run thus commits twice (creation and
// end) instead of three times, and skips the worker's wake-up and claim
// query. Otherwise, and with Options.QueueEveryRun, the run is queued for
// any worker to claim, as before.
//
// Nothing about durability or fencing changes: the inserted run is exactly
// what a claim would have written (the lease is live for Options.Lease from
// the insert, renewed by the worker's lease loop once it executes). If the
// process dies between the commit and the hand-off, or the creation's
// outcome is unknown, the lease expires and any worker claims the run
// (status running, lease expired: store.ClaimRun's second case), bumping
// the token; a worker shutting down releases a handed-off run like any
// other.

// addLocal makes w a candidate for hand-offs.
func (k *Kernel) addLocal(w *worker) {
	k.localMu.Lock()
	k.locals = append(k.locals, w)
	k.localMu.Unlock()
}

// removeLocal stops hand-offs to w.
func (k *Kernel) removeLocal(w *worker) {
	k.localMu.Lock()
	k.locals = slices.DeleteFunc(k.locals, func(x *worker) bool { return x == w })
	k.localMu.Unlock()
}

// reserveLocal returns a local worker that runs logic (and missionID's
// runs) and had a free slot, which it now holds for a hand-off; nil when
// there is none. The caller must end the reservation with handOff or
// unreserve.
func (k *Kernel) reserveLocal(logic, missionID string) *worker {
	if k.opts.QueueEveryRun {
		return nil
	}
	k.localMu.Lock()
	ws := slices.Clone(k.locals)
	k.localMu.Unlock()
	for _, w := range ws {
		if w.reserve(logic, missionID) {
			return w
		}
	}
	return nil
}

// claimWait bounds how long a hand-off waits for the claim loop's attempt
// that holds the last free slot: usually a claim that finds nothing and
// gives the slot back within a round trip.
const claimWait = 20 * time.Millisecond

// reserve takes a slot for a hand-off of a run of logic in missionID, if
// w runs it and has one free. When the only free slot is held by the claim
// loop's attempt (which a worker makes after each run it claimed ends, in
// case more are queued), it waits for that attempt, up to w.claimWait
// (claimWait).
func (w *worker) reserve(logic, missionID string) bool {
	if _, ok := w.cfg.Logics[logic]; !ok {
		return false
	}
	if w.cfg.MissionID != "" && w.cfg.MissionID != missionID {
		return false
	}
	var t *time.Timer
	for {
		w.mu.Lock()
		if w.closing {
			w.mu.Unlock()
			return false
		}
		select {
		case w.slots <- struct{}{}:
			w.wg.Add(1) // under mu, before closing: shutdown waits for the hand-off
			w.mu.Unlock()
			return true
		default:
		}
		attempt := w.attempt
		w.mu.Unlock()
		if attempt == nil {
			return false
		}
		if t == nil {
			t = time.NewTimer(w.claimWait)
			defer t.Stop()
		}
		select {
		case <-attempt:
		case <-t.C:
			return false
		}
	}
}

// slotForClaim takes a slot for a claim attempt of the claim loop,
// waiting for one, and records the attempt in the same step (under mu), so
// that a hand-off never finds the slot taken with no attempt to wait for:
// it would queue its run instead, to be claimed only after the worker's
// next wake-up. It returns the function that records the attempt's end
// (after the slot is back, or taken by the claimed run); false once ctx
// ends.
func (w *worker) slotForClaim(ctx context.Context) (claimed func(), ok bool) {
	for {
		w.mu.Lock()
		select {
		case w.slots <- struct{}{}:
			done := make(chan struct{})
			w.attempt = done
			w.mu.Unlock()
			return func() {
				w.mu.Lock()
				if w.attempt == done {
					w.attempt = nil
				}
				w.mu.Unlock()
				close(done)
			}, true
		default:
		}
		w.mu.Unlock()
		select {
		case <-w.freed:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// freeSlot gives a slot back and tells a claim loop waiting for one.
func (w *worker) freeSlot() {
	<-w.slots
	select {
	case w.freed <- struct{}{}:
	default: // a token is there already: the loop will look
	}
}

// slotRelease returns a function that frees one slot, once however often
// it is called.
func (w *worker) slotRelease() func() {
	var once sync.Once
	return func() { once.Do(w.freeSlot) }
}

// unreserve gives back a reservation whose creation failed.
func (w *worker) unreserve() {
	w.freeSlot()
	w.wg.Done()
}

// claimedRun returns r as a claim by w at now would leave it.
func (w *worker) claimedRun(r store.Run, now int64) store.Run {
	r.Status = StatusRunning
	r.LeaseOwner = w.cfg.ID
	r.LeaseExpiresAt = now + w.k.opts.Lease.Milliseconds()
	r.FencingToken = 1
	r.StartedAt = now
	r.Holder = w.holder
	return r
}

// handOff executes r, inserted claimed by w, on the reserved slot.
func (w *worker) handOff(r store.Run) {
	// As claim reports a first claim: never started before.
	r.StartedAt = 0
	go func() {
		release := w.slotRelease()
		defer w.wg.Done()
		defer release()
		w.execute(r, nil, true, release)
	}()
}
