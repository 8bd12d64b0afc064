package kernel

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// insertCounter records, per transaction, how many events and steps were
// inserted and how many statements inserted them.
type insertCounter struct {
	store.Store
	mu    sync.Mutex
	perTx []countInserts // guarded by mu
}

func (c *insertCounter) Tx(ctx context.Context, fn func(q store.Queries) error) error {
	q := &countInserts{}
	err := c.Store.Tx(ctx, func(tq store.Queries) error {
		*q = countInserts{Queries: tq}
		return fn(q)
	})
	if err == nil && q.events > 0 {
		c.mu.Lock()
		c.perTx = append(c.perTx, *q)
		c.mu.Unlock()
	}
	return err
}

type countInserts struct {
	store.Queries
	events, statements    int
	steps, stepStatements int
}

func (q countInserts) String() string {
	return fmt.Sprintf("{%d events in %d, %d steps in %d}", q.events, q.statements, q.steps, q.stepStatements)
}

func (q *countInserts) InsertStep(ctx context.Context, s store.Step) error {
	q.steps++
	q.stepStatements++
	return q.Queries.InsertStep(ctx, s)
}

func (q *countInserts) InsertSteps(ctx context.Context, ss []store.Step) error {
	q.steps += len(ss)
	if len(ss) > 0 {
		q.stepStatements += (len(ss) + store.MaxStepsPerInsert - 1) / store.MaxStepsPerInsert
	}
	return q.Queries.InsertSteps(ctx, ss)
}

func (q *countInserts) InsertEvent(ctx context.Context, e store.Event) (int64, error) {
	q.events++
	q.statements++
	return q.Queries.InsertEvent(ctx, e)
}

func (q *countInserts) InsertEvents(ctx context.Context, es []store.Event) error {
	q.events += len(es)
	if len(es) > 0 {
		q.statements += (len(es) + store.MaxEventsPerInsert - 1) / store.MaxEventsPerInsert
	}
	return q.Queries.InsertEvents(ctx, es)
}

// A kernel transaction writes its events in one statement, in the order it
// recorded them: the pending steps' step.completed, then the intent's
// step.started, then the next, so a reader of the stream sees them in
// journal order. The pending steps' rows and the intent's are one
// statement too.
func TestTransactionInsertsBatched(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		st := &insertCounter{Store: db.Store}
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
		perTx := append([]countInserts(nil), st.perTx...)
		st.mu.Unlock()
		var largest countInserts
		for _, c := range perTx {
			if c.statements > 1 {
				t.Errorf("a transaction inserted %d events in %d statements, want one (all: %v)", c.events, c.statements, perTx)
			}
			if c.events > largest.events {
				largest = c
			}
		}
		// The three pure steps' records and the intent: four events, four
		// step rows, each in one statement.
		if largest.events != 4 || largest.steps != 4 || largest.stepStatements != 1 {
			t.Errorf("the intent's transaction inserted %v, want {4 events in 1, 4 steps in 1} (all: %v)", largest, perTx)
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
