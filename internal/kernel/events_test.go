package kernel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestListenEventsDeliversEveryEventInOrder listens from cursor 0 while a
// mission runs in another kernel (as another process would), and from a
// cursor in the middle afterwards: ids strictly increase and none is missed.
func TestListenEventsDeliversEveryEventInOrder(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		c := newCounter()
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			for _, n := range []string{"a", "b", "c", "d"} {
				if _, err := pure(rc, c, n, n); err != nil {
					return kernel.Result{}, err
				}
				if err := rc.Emit("test.tick", map[string]string{"n": n}); err != nil {
					return kernel.Result{}, err
				}
			}
			return kernel.Result{Status: kernel.StatusDone}, nil
		}
		other := kernel.New(db.Store, fastOpts(t.TempDir()))
		b.worker(other, map[string]kernel.Logic{"ev": logic})
		mid, _ := b.mission("ev", nil, kernel.Budget{})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var got []store.Event
		errEnd := errors.New("end")
		err := b.k.ListenEvents(ctx, 0, mid, func(e store.Event) error {
			got = append(got, e)
			if e.Kind == "run.completed" {
				return errEnd
			}
			return nil
		})
		if !errors.Is(err, errEnd) {
			t.Fatalf("listen: %v after %d events", err, len(got))
		}
		ticks := 0
		for i, e := range got {
			if i > 0 && e.ID <= got[i-1].ID {
				t.Fatalf("event ids not increasing: %d after %d", e.ID, got[i-1].ID)
			}
			if e.Kind == "test.tick" {
				ticks++
			}
		}
		if ticks != 4 {
			t.Errorf("ticks = %d, want 4", ticks)
		}
		// From a cursor in the middle: exactly the rest.
		mid2 := got[len(got)/2].ID
		var rest []int64
		ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel2()
		_ = b.k.ListenEvents(ctx2, mid2, mid, func(e store.Event) error {
			rest = append(rest, e.ID)
			if e.ID == got[len(got)-1].ID {
				return errEnd
			}
			return nil
		})
		if want := len(got) - len(got)/2 - 1; len(rest) != want || rest[0] <= mid2 {
			t.Errorf("after cursor %d got %v, want the %d later events", mid2, rest, want)
		}
	})
}

// TestCancelCascadesToChildRuns: cancelling a mission cancels its child
// runs too, and a child of an unknown run is refused.
func TestCancelCascadesToChildRuns(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		mid, root := b.mission("nobody-claims-this", nil, kernel.Budget{})
		child, err := b.k.CreateRun(b.ctx, root, kernel.RunSpec{Logic: "nobody-claims-this"})
		if err != nil {
			t.Fatal(err)
		}
		grandchild, err := b.k.CreateRun(b.ctx, child, kernel.RunSpec{Logic: "nobody-claims-this"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.k.CreateRun(b.ctx, "no-such-run", kernel.RunSpec{Logic: "x"}); !errors.Is(err, kernel.ErrNotFound) {
			t.Fatalf("child of unknown run: %v", err)
		}
		if err := b.k.RequestCancel(b.ctx, mid); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{root, child, grandchild} {
			r, _ := db.Store.GetRun(b.ctx, id)
			if r.Status != kernel.StatusCancelled {
				t.Errorf("run %s is %s, want cancelled", id, r.Status)
			}
		}
		if r, _ := db.Store.GetRun(b.ctx, grandchild); r.ParentRunID != child || r.MissionID != mid {
			t.Errorf("grandchild = %+v", r)
		}

		// A running root does not shield its idle children: they end
		// cancelled at once, the root when its logic sees the flag.
		mid2, root2 := b.mission("nobody-claims-this", nil, kernel.Budget{})
		now := time.Now().UnixMilli()
		if r, _, err := db.Store.ClaimStart(b.ctx, store.ClaimRunParams{WorkerID: "w", Now: now, LeaseUntil: now + time.Minute.Milliseconds(), MissionID: mid2}); err != nil || r.ID != root2 {
			t.Fatalf("claim the root: %v %v", r.ID, err)
		}
		child2, err := b.k.CreateRun(b.ctx, root2, kernel.RunSpec{Logic: "nobody-claims-this"})
		if err != nil {
			t.Fatal(err)
		}
		if err := b.k.RequestCancel(b.ctx, mid2); err != nil {
			t.Fatal(err)
		}
		if r, _ := db.Store.GetRun(b.ctx, child2); r.Status != kernel.StatusCancelled {
			t.Errorf("queued child of a running root is %s after the cancel, want cancelled", r.Status)
		}
		if r, _ := db.Store.GetRun(b.ctx, root2); r.Status != kernel.StatusRunning || !r.CancelRequested {
			t.Errorf("running root: %s, cancel requested %v; want running, flagged", r.Status, r.CancelRequested)
		}
	})
}
