package kernel

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// fenceCounter records how many fencing checks (FenceRun without a lease
// extension) each transaction made.
type fenceCounter struct {
	store.Store
	mu     sync.Mutex
	perTx  []int // guarded by mu
	active atomic.Bool
}

func (c *fenceCounter) Tx(ctx context.Context, fn func(q store.Queries) error) error {
	n := 0
	err := c.Store.Tx(ctx, func(q store.Queries) error { return fn(countFences{Queries: q, n: &n}) })
	if c.active.Load() {
		c.mu.Lock()
		c.perTx = append(c.perTx, n)
		c.mu.Unlock()
	}
	return err
}

type countFences struct {
	store.Queries
	n *int
}

func (q countFences) FenceRun(ctx context.Context, f store.Fence, now, leaseUntil int64) (bool, error) {
	if leaseUntil == 0 {
		*q.n++
	}
	return q.Queries.FenceRun(ctx, f, now, leaseUntil)
}

// A transaction that writes a run's pending records checks the run's
// fence once: the intent (or result) it carries answers from that check
// instead of reading the row it holds again. The answer still carries a
// cancel request: an intent committed with pending records after a
// cancel was requested ends the run cancelled, its effect not run.
func TestOneFenceCheckPerTransaction(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		st := &fenceCounter{Store: db.Store}
		cc := &claimCounter{Store: st}
		opts := testOpts(t)
		opts.CancelPoll = time.Minute // only the intent's fence check sees a cancel
		k := New(cc, opts)
		var effects atomic.Int64
		cancelled := make(chan struct{})
		proceed := make(chan struct{})
		logic := func(rc RunContext) (Result, error) {
			var in struct{ Cancel bool }
			_ = json.Unmarshal(rc.Input(), &in)
			// A pure step: its record waits for the next transaction.
			if _, err := rc.Step(StepSpec{Kind: "t", Name: "pure", Effect: EffectPure, Request: 1},
				func(context.Context, string) (Outcome, error) { return Outcome{Result: 1}, nil }); err != nil {
				return Result{}, err
			}
			if in.Cancel {
				close(cancelled)
				<-proceed
			}
			// Its intent commits with the pure step's record.
			if _, err := rc.Step(StepSpec{Kind: "t", Name: "effect", Effect: EffectNonIdempotent, Request: 2},
				func(context.Context, string) (Outcome, error) { effects.Add(1); return Outcome{Result: 2}, nil }); err != nil {
				return Result{}, err
			}
			return Result{Status: StatusDone}, nil
		}
		startWorker(t, k, cc, "w", map[string]Logic{"x": logic}, 1)
		ctx := context.Background()

		st.active.Store(true)
		_, rid, err := k.CreateMission(ctx, MissionSpec{Title: "fences", Logic: "x"})
		if err != nil {
			t.Fatal(err)
		}
		waitRun(t, st, rid, StatusDone)
		st.active.Store(false)
		st.mu.Lock()
		counts := append([]int(nil), st.perTx...)
		st.mu.Unlock()
		for _, n := range counts {
			if n > 1 {
				t.Errorf("fence checks per run transaction = %v, want at most 1 in each", counts)
				break
			}
		}
		if effects.Load() != 1 {
			t.Fatalf("effect ran %d times, want 1", effects.Load())
		}

		mid, rid2, err := k.CreateMission(ctx, MissionSpec{Title: "cancelled", Logic: "x", Input: map[string]bool{"cancel": true}})
		if err != nil {
			t.Fatal(err)
		}
		<-cancelled
		if err := k.RequestCancel(ctx, mid); err != nil {
			t.Fatal(err)
		}
		close(proceed)
		waitRun(t, st, rid2, StatusCancelled)
		if effects.Load() != 1 {
			t.Errorf("effect ran %d times in all, want 1: the cancelled run's intent must not let it run", effects.Load())
		}
	})
}

// A cancel requested while a run is running, seen by none of its polls,
// ends the run at its next suspension: it must not go waiting (or
// sleeping) with the request unseen, since the requester found it running
// and left it to end itself; a waiting run would wait for an owner who
// has cancelled it.
func TestCancelSeenWhenTheRunSuspends(t *testing.T) {
	t.Parallel()
	for _, suspend := range []string{"wait", "sleep"} {
		t.Run(suspend, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db storetest.DB) {
				cc := &claimCounter{Store: db.Store}
				opts := testOpts(t)
				opts.CancelPoll = time.Minute // only the suspension's fence check sees it
				k := New(cc, opts)
				entered, proceed := make(chan struct{}), make(chan struct{})
				logic := func(rc RunContext) (Result, error) {
					// A pure step first: the suspension commits with a pending record.
					if _, err := rc.Step(StepSpec{Kind: "t", Name: "pure", Effect: EffectPure, Request: 1},
						func(context.Context, string) (Outcome, error) { return Outcome{Result: 1}, nil }); err != nil {
						return Result{}, err
					}
					close(entered)
					<-proceed
					var err error
					if suspend == "wait" {
						_, err = rc.Wait(WaitQuestion, map[string]string{"question": "go on?"}, 0)
					} else {
						err = rc.Sleep(60_000)
					}
					if err != nil {
						return Result{}, err
					}
					return Result{Status: StatusDone}, nil
				}
				startWorker(t, k, cc, "w", map[string]Logic{"x": logic}, 1)
				ctx := context.Background()
				mid, rid, err := k.CreateMission(ctx, MissionSpec{Title: "cancelled before it suspends", Logic: "x"})
				if err != nil {
					t.Fatal(err)
				}
				<-entered
				if err := k.RequestCancel(ctx, mid); err != nil {
					t.Fatal(err)
				}
				close(proceed)
				waitRun(t, db.Store, rid, StatusCancelled)
				if ws, err := db.Store.ListWaits(ctx, store.ListWaitsParams{Status: "pending", RunID: rid}); err != nil || len(ws) != 0 {
					t.Errorf("pending waits of the cancelled run: %v %v", ws, err)
				}
			})
		})
	}
}
