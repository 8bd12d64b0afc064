package kernel

import (
	"context"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// Leases are short (Options.Lease, 6 s) and renewed often (every
// Options.Heartbeat, 1 s) by one loop per worker: each tick is one
// statement, store.RenewLeases, that extends every lease the worker holds
// under its fencing token and returns the cancel flags, whatever the number
// of runs. A worker killed with kill -9 therefore leaves leases that expire
// within Lease, and another worker claims its runs at its next poll.
//
// Safety does not rest on the lease's length but on the fencing token:
// every transaction a run commits begins with FenceRun, which locks the run
// row (PostgreSQL FOR NO KEY UPDATE; SQLite's write lock) and checks owner
// and token. A claim increments the token. Either the stale holder's
// transaction locked the row first, and the claim (SKIP LOCKED, or SQLite's
// single writer) comes after its commit, which the new holder then replays;
// or the claim committed first, and the stale check finds another token and
// rolls back. A renewal never changes the token, so a renewal racing a
// claim cannot revive a lost lease.

// workerRowEvery is how often a worker refreshes its row in the workers
// table (status pages call a worker alive for 60 s).
const workerRowEvery = 20 * time.Second

// heldLease is a lease the worker's lease loop renews.
type heldLease struct {
	rc    *runCtx
	until int64 // the lease's end as last renewed; guarded by worker.mu
}

// leaseTick is how often the lease loop runs: every Heartbeat, or every
// CancelPoll when that is shorter, since the renewal also reads the cancel
// flags.
func (k *Kernel) leaseTick() time.Duration {
	return min(k.opts.Heartbeat, k.opts.CancelPoll)
}

// unhold stops renewing the lease of rc's execution; a later execution of
// the same run, registered meanwhile, keeps its own.
func (w *worker) unhold(rc *runCtx) {
	w.mu.Lock()
	if h, ok := w.held[rc.run.ID]; ok && h.rc == rc {
		delete(w.held, rc.run.ID)
	}
	w.mu.Unlock()
}

// renew extends every lease the worker holds in one statement. A lease
// that is no longer this worker's under its token (taken over, or the run
// no longer running) cancels its run with ErrLeaseLost; a cancel flag
// cancels it with ErrCancelled. When the renewal fails, runs whose lease
// has ended are cancelled with ErrLeaseLost, since another worker may
// claim them.
func (w *worker) renew(ctx context.Context) {
	k := w.k
	w.mu.Lock()
	held := make(map[string]*heldLease, len(w.held))
	refs := make([]store.LeaseRef, 0, len(w.held))
	for id, h := range w.held {
		held[id] = h
		refs = append(refs, store.LeaseRef{RunID: id, Token: h.rc.fence.Token})
	}
	w.mu.Unlock()
	if len(refs) == 0 {
		return
	}
	now := k.now()
	until := now + k.opts.Lease.Milliseconds()
	got, err := k.st.RenewLeases(ctx, store.RenewLeasesParams{Owner: w.cfg.ID, Held: refs, LeaseUntil: until})
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		k.opts.Logger.Warn("lease renewal failed", "worker", w.cfg.ID, "runs", len(refs), "err", err.Error())
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, h := range held {
			if now >= h.until {
				h.rc.cancel(newErr(CodeLeaseLost, h.rc.run.ID, -1, "lease renewal failed past its expiry"))
			}
		}
		return
	}
	renewed := make(map[string]store.RenewedLease, len(got))
	for _, l := range got {
		renewed[l.RunID] = l
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, h := range held {
		l, ok := renewed[id]
		switch {
		case !ok || l.Token != h.rc.fence.Token:
			h.rc.cancel(newErr(CodeLeaseLost, id, -1, "lease taken over"))
		case l.CancelRequested:
			h.until = until
			h.rc.cancel(newErr(CodeCancelled, id, -1, "cancel requested"))
		default:
			h.until = until
		}
	}
}
