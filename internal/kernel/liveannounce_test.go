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
// watcher sees, before its exec runs, copies of the run's step events
// since its last LiveAnnounce (committed meanwhile or not yet; each once,
// in seq order) and then its own step.started, which has not committed. Its record and the others
// persist with the run's next transaction, with no persisted step.started.
// A model call's result does not wait: the next LiveAnnounce step commits
// the pending records first (a run of turns without tool calls is
// journaled turn by turn); nor does a result too large for its copy to
// carry (watchers show its persisted event).
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
		committed := func(rc RunContext, seqs ...int) {
			for _, s := range seqs {
				if st, err := db.Store.GetStep(context.Background(), rc.RunID(), s); err != nil || st.Status != "completed" {
					fail("step %d is not committed while the next LiveAnnounce step runs (%v)", s, err)
				}
			}
		}
		logic := func(rc RunContext) (Result, error) {
			model := func(i int, check func()) error {
				_, err := rc.Step(StepSpec{Kind: "model_call", Name: "model", Effect: EffectModelCall, Request: i, LiveAnnounce: true},
					func(context.Context, string) (Outcome, error) { check(); return Outcome{Result: i}, nil })
				return err
			}
			read := func(i int, result any, fail error) error {
				_, err := rc.Step(StepSpec{Kind: "t", Name: "read", Effect: EffectRead, Request: i},
					func(context.Context, string) (Outcome, error) { return Outcome{Result: result}, fail })
				return err
			}
			effect := func(i int) error {
				_, err := rc.Step(StepSpec{Kind: "t", Name: "effect", Effect: EffectNonIdempotent, Request: i},
					func(context.Context, string) (Outcome, error) { return Outcome{Result: i}, nil })
				return err
			}
			if err := read(0, "r0", nil); err != nil {
				return Result{}, err
			}
			// The read's copy, then the call's start; neither committed.
			if err := model(1, func() {
				want(rc.RunID(), "step.completed@0", "step.started@1")
				uncommitted(rc, 0, 1)
			}); err != nil {
				return Result{}, err
			}
			// Its intent commits the pending records; its result commits.
			if err := effect(2); err != nil {
				return Result{}, err
			}
			// Copies of what committed since the last announce (not the
			// read's again), then the call's start.
			if err := model(3, func() {
				want(rc.RunID(), "step.completed@1", "step.started@2", "step.completed@2", "step.started@3")
				committed(rc, 0, 1, 2)
				uncommitted(rc, 3)
			}); err != nil {
				return Result{}, err
			}
			// A model call's result commits before the next call runs.
			if err := model(4, func() {
				want(rc.RunID(), "step.completed@3", "step.started@4")
				committed(rc, 3)
				uncommitted(rc, 4)
			}); err != nil {
				return Result{}, err
			}
			if err := effect(5); err != nil {
				return Result{}, err
			}
			// A read whose result is too large to travel live: its copy
			// goes without it, so its record commits before the next
			// call runs, and its persisted event is on its way.
			if err := read(6, strings.Repeat("x", maxLiveBodyLen), nil); err != nil {
				return Result{}, err
			}
			if err := model(7, func() {
				want(rc.RunID(), "step.completed@4", "step.started@5", "step.completed@5", "step.completed@6", "step.started@7")
				committed(rc, 6)
				uncommitted(rc, 7)
			}); err != nil {
				return Result{}, err
			}
			if err := effect(8); err != nil {
				return Result{}, err
			}
			// The same for a failure whose error is too large.
			if err := read(9, nil, errors.New(strings.Repeat("e", maxLiveBodyLen))); err == nil {
				return Result{}, errors.New("the failing read did not fail")
			}
			if err := model(10, func() {
				want(rc.RunID(), "step.completed@7", "step.started@8", "step.completed@8", "step.failed@9", "step.started@10")
				if st, err := db.Store.GetStep(context.Background(), rc.RunID(), 9); err != nil || st.Status != "failed" {
					fail("step 9 is not committed while the next LiveAnnounce step runs (%v)", err)
				}
			}); err != nil {
				return Result{}, err
			}
			return Result{Status: StatusDone}, nil
		}
		// A model call's result that must commit first, before a run's
		// first LiveAnnounce: its copy still precedes the call's start.
		first := func(rc RunContext) (Result, error) {
			if _, err := rc.Step(StepSpec{Kind: "model_call", Name: "plain", Effect: EffectModelCall, Request: 0},
				func(context.Context, string) (Outcome, error) { return Outcome{Result: 0}, nil }); err != nil {
				return Result{}, err
			}
			if _, err := rc.Step(StepSpec{Kind: "model_call", Name: "model", Effect: EffectModelCall, Request: 1, LiveAnnounce: true},
				func(context.Context, string) (Outcome, error) {
					want(rc.RunID(), "step.completed@0", "step.started@1")
					committed(rc, 0)
					uncommitted(rc, 1)
					return Outcome{Result: 1}, nil
				}); err != nil {
				return Result{}, err
			}
			return Result{Status: StatusDone}, nil
		}
		startWorker(t, k, cc, "w", map[string]Logic{"x": logic, "y": first}, 1)
		_, rid0, err := k.CreateMission(context.Background(), MissionSpec{Title: "live first", Logic: "y"})
		if err != nil {
			t.Fatal(err)
		}
		waitRun(t, db.Store, rid0, StatusDone)
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
		if len(steps) != 11 {
			t.Fatalf("%d steps recorded, want 11", len(steps))
		}
		for _, s := range steps {
			if s.Status != "completed" && s.Seq != 9 {
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
		if w := "[step.completed@0 step.completed@1 step.started@2 step.completed@2 step.completed@3 step.completed@4 step.started@5 step.completed@5 step.completed@6 step.completed@7 step.started@8 step.completed@8 step.failed@9 step.completed@10]"; fmt.Sprint(got) != w {
			t.Errorf("persisted step events %v, want %s", got, w)
		}
	})
}
