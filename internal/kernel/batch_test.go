package kernel

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// eventCounter records, per transaction, how many events were inserted
// and how many statements inserted them.
type eventCounter struct {
	store.Store
	mu    sync.Mutex
	perTx [][2]int // events, statements; guarded by mu
}

func (c *eventCounter) Tx(ctx context.Context, fn func(q store.Queries) error) error {
	q := &countEvents{}
	err := c.Store.Tx(ctx, func(tq store.Queries) error {
		q.Queries, q.events, q.statements = tq, 0, 0
		return fn(q)
	})
	if err == nil && q.events > 0 {
		c.mu.Lock()
		c.perTx = append(c.perTx, [2]int{q.events, q.statements})
		c.mu.Unlock()
	}
	return err
}

type countEvents struct {
	store.Queries
	events, statements int
}

func (q *countEvents) InsertEvent(ctx context.Context, e store.Event) (int64, error) {
	q.events++
	q.statements++
	return q.Queries.InsertEvent(ctx, e)
}

func (q *countEvents) InsertEvents(ctx context.Context, es []store.Event) error {
	q.events += len(es)
	if len(es) > 0 {
		q.statements += (len(es) + store.MaxEventsPerInsert - 1) / store.MaxEventsPerInsert
	}
	return q.Queries.InsertEvents(ctx, es)
}

// A kernel transaction writes its events in one statement, in the order it
// recorded them: the pending steps' step.completed, then the intent's
// step.started, then the next, so a reader of the stream sees them in
// journal order.
func TestTransactionEventsInOneStatement(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		st := &eventCounter{Store: db.Store}
		cc := &claimCounter{Store: st}
		k := New(cc, testOpts(t))
		logic := func(rc RunContext) (Result, error) {
			for i := range 3 {
				if _, err := rc.Step(StepSpec{Kind: "t", Name: fmt.Sprint("pure", i), Effect: EffectPure, Request: i},
					func(context.Context, string) (Outcome, error) { return Outcome{Result: i}, nil }); err != nil {
					return Result{}, err
				}
			}
			if _, err := rc.Step(StepSpec{Kind: "t", Name: "effect", Effect: EffectNonIdempotent, Request: 3},
				func(context.Context, string) (Outcome, error) { return Outcome{Result: 3}, nil }); err != nil {
				return Result{}, err
			}
			return Result{Status: StatusDone}, nil
		}
		startWorker(t, k, cc, "w", map[string]Logic{"x": logic}, 1)
		mid, rid, err := k.CreateMission(context.Background(), MissionSpec{Title: "batched", Logic: "x"})
		if err != nil {
			t.Fatal(err)
		}
		waitRun(t, st, rid, StatusDone)
		st.mu.Lock()
		perTx := append([][2]int(nil), st.perTx...)
		st.mu.Unlock()
		most := 0
		for _, c := range perTx {
			if c[1] > 1 {
				t.Errorf("a transaction inserted %d events in %d statements, want one (all: %v)", c[0], c[1], perTx)
			}
			most = max(most, c[0])
		}
		if most < 4 {
			t.Errorf("largest transaction inserted %d events, want the three pure steps' and the intent's (all: %v)", most, perTx)
		}
		evs, err := db.Store.ListEvents(context.Background(), store.ListEventsParams{MissionID: mid})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			if e.Seq != nil {
				got = append(got, fmt.Sprint(e.Kind, "@", *e.Seq))
			}
		}
		want := "[step.completed@0 step.completed@1 step.completed@2 step.started@3 step.completed@3]"
		if fmt.Sprint(got) != want {
			t.Errorf("step events = %v, want %s", got, want)
		}
	})
}
