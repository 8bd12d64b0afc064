package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestLiveAnnounce: a LiveAnnounce step records no intent, and a live
// watcher sees, before its exec runs, the step events of the run's
// uncommitted records (each once, in seq order) and then its own
// step.started; none of it has committed then. Its record and the others
// persist with the run's next transaction, with no persisted step.started.
func TestLiveAnnounce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		cc := &claimCounter{Store: db.Store}
		k := New(cc, testOpts(t))
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		sub := k.SubscribeTransient(ctx)

		var mu sync.Mutex
		var problems []string
		fail := func(format string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			problems = append(problems, fmt.Sprintf(format, a...))
		}
		// want reads the next step events of runID off sub and compares
		// them with want ("kind@seq").
		want := func(runID string, want ...string) {
			var got []string
			deadline := time.After(10 * time.Second)
			for len(got) < len(want) {
				select {
				case e := <-sub:
					if e.RunID != runID || !strings.HasPrefix(e.Kind, "step.") {
						continue
					}
					var p struct {
						Seq int `json:"seq"`
					}
					raw, _ := e.Payload.(json.RawMessage)
					_ = json.Unmarshal(raw, &p)
					got = append(got, fmt.Sprint(e.Kind, "@", p.Seq))
				case <-deadline:
					fail("live events before the exec: got %v, want %v", got, want)
					return
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				fail("live events before the exec: got %v, want %v", got, want)
			}
		}
		uncommitted := func(rc RunContext, seqs ...int) {
			for _, s := range seqs {
				if _, err := db.Store.GetStep(context.Background(), rc.RunID(), s); !errors.Is(err, store.ErrNotFound) {
					fail("step %d has a row while the LiveAnnounce step runs (%v)", s, err)
				}
			}
		}
		logic := func(rc RunContext) (Result, error) {
			if _, err := rc.Step(StepSpec{Kind: "t", Name: "read", Effect: EffectRead, Request: 0},
				func(context.Context, string) (Outcome, error) { return Outcome{Result: "r0"}, nil }); err != nil {
				return Result{}, err
			}
			for i := 1; i <= 2; i++ {
				if _, err := rc.Step(StepSpec{Kind: "model_call", Name: "model", Effect: EffectModelCall, Request: i, LiveAnnounce: true},
					func(context.Context, string) (Outcome, error) {
						// Step 0's copy once, before the first call only;
						// the second call's copies are the first's result.
						want(rc.RunID(), fmt.Sprint("step.completed@", i-1), fmt.Sprint("step.started@", i))
						uncommitted(rc, 0, i)
						return Outcome{Result: i}, nil
					}); err != nil {
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
		mid, rid, err := k.CreateMission(context.Background(), MissionSpec{Title: "live", Logic: "x"})
		if err != nil {
			t.Fatal(err)
		}
		waitRun(t, db.Store, rid, StatusDone)
		mu.Lock()
		for _, p := range problems {
			t.Error(p)
		}
		mu.Unlock()
		steps, err := db.Store.ListSteps(context.Background(), rid, -1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != 4 {
			t.Fatalf("%d steps recorded, want 4", len(steps))
		}
		for _, s := range steps {
			if s.Status != "completed" {
				t.Errorf("step %d is %s, want completed", s.Seq, s.Status)
			}
		}
		evs, err := db.Store.ListEvents(context.Background(), store.ListEventsParams{MissionID: mid})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range evs {
			if e.Seq != nil && strings.HasPrefix(e.Kind, "step.") {
				got = append(got, fmt.Sprint(e.Kind, "@", *e.Seq))
			}
		}
		if w := "[step.completed@0 step.completed@1 step.completed@2 step.started@3 step.completed@3]"; fmt.Sprint(got) != w {
			t.Errorf("persisted step events %v, want %s", got, w)
		}
	})
}
