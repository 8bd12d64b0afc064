package kernel_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestHappyPath(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		c := newCounter()
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			var parts []string
			for _, n := range []string{"a", "b", "c"} {
				r, err := pure(rc, c, n, n+"!")
				if err != nil {
					return kernel.Result{}, err
				}
				parts = append(parts, r)
			}
			return kernel.Result{Status: kernel.StatusDone, Summary: strings.Join(parts, ",")}, nil
		}
		b.worker(b.k, map[string]kernel.Logic{"happy": logic})
		mid, rid := b.mission("happy", nil, kernel.Budget{})
		r := b.waitStatus(rid, kernel.StatusDone, kernel.StatusFailed)
		if r.Status != kernel.StatusDone {
			t.Fatalf("status = %s (%s)", r.Status, r.Error)
		}
		var res kernel.Result
		if err := json.Unmarshal(r.Result, &res); err != nil || res.Summary != `"a!","b!","c!"` {
			t.Fatalf("result = %s (%v)", r.Result, err)
		}
		m, err := b.k.GetMission(b.ctx, mid)
		if err != nil || m.Status != kernel.StatusDone {
			t.Fatalf("mission status = %q (%v), want done", m.Status, err)
		}
		steps := b.steps(rid)
		if len(steps) != 3 {
			t.Fatalf("steps = %d, want 3", len(steps))
		}
		for i, s := range steps {
			if s.Seq != i || s.Status != "completed" {
				t.Errorf("step %d = seq %d status %s", i, s.Seq, s.Status)
			}
		}
		evs, _ := db.Store.ListEvents(b.ctx, store.ListEventsParams{MissionID: mid})
		kinds := map[string]int{}
		for _, e := range evs {
			kinds[e.Kind]++
		}
		// Pure steps record no intent (re-running them is harmless), so
		// they have no step.started event.
		if kinds["step.started"] != 0 || kinds["step.completed"] != 3 || kinds["run.completed"] != 1 || kinds["mission.created"] != 1 {
			t.Errorf("event kinds = %v", kinds)
		}
	})
}

// suspendOnce is a logic of steps around a question wait, so that the run is
// replayed from the top once the wait is answered.
func TestReplayReturnsRecordedResults(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		c := newCounter()
		var calls atomic.Int32
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			calls.Add(1)
			a, err := pure(rc, c, "before", 1)
			if err != nil {
				return kernel.Result{}, err
			}
			out, err := rc.Wait(kernel.WaitQuestion, map[string]string{"text": "go on?"}, 0)
			if err != nil {
				return kernel.Result{}, err
			}
			z, err := pure(rc, c, "after", 2)
			if err != nil {
				return kernel.Result{}, err
			}
			return kernel.Result{Status: kernel.StatusDone, Summary: a + z + string(out.Resolution)}, nil
		}
		b.worker(b.k, map[string]kernel.Logic{"replay": logic})
		_, rid := b.mission("replay", nil, kernel.Budget{})
		w := b.pendingWait(rid)
		b.waitStatus(rid, kernel.StatusWaiting)
		if _, err := b.k.ResolveWait(b.ctx, w.ID, "yes", "owner"); err != nil {
			t.Fatal(err)
		}
		r := b.waitStatus(rid, kernel.StatusDone, kernel.StatusFailed)
		if r.Status != kernel.StatusDone || !strings.Contains(string(r.Result), `12\"yes\"`) {
			t.Fatalf("run = %s %s %s", r.Status, r.Error, r.Result)
		}
		if calls.Load() != 2 {
			t.Errorf("logic called %d times, want 2 (once before the wait, once replaying)", calls.Load())
		}
		if c.get("before") != 1 || c.get("after") != 1 {
			t.Errorf("exec counts before=%d after=%d, want 1 and 1", c.get("before"), c.get("after"))
		}
		// A second resolve of the same wait is refused and changes nothing.
		_, err := b.k.ResolveWait(b.ctx, w.ID, "again", "owner")
		mustErrIs(t, err, kernel.ErrWaitNotPending)
	})
}

func TestRequestHashMismatchIsNonDeterminism(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		var calls atomic.Int32
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			n := calls.Add(1)
			_, err := rc.Step(kernel.StepSpec{Kind: "test", Name: "x", Effect: kernel.EffectPure, Request: map[string]int32{"n": n}},
				func(context.Context, string) (kernel.Outcome, error) { return kernel.Outcome{Result: n}, nil })
			if err != nil {
				return kernel.Result{}, err
			}
			if _, err := rc.Wait(kernel.WaitQuestion, "q", 0); err != nil {
				return kernel.Result{}, err
			}
			return kernel.Result{Status: kernel.StatusDone}, nil
		}
		b.worker(b.k, map[string]kernel.Logic{"nd": logic})
		_, rid := b.mission("nd", nil, kernel.Budget{})
		w := b.pendingWait(rid)
		if _, err := b.k.ResolveWait(b.ctx, w.ID, "ok", "owner"); err != nil {
			t.Fatal(err)
		}
		r := b.waitStatus(rid, kernel.StatusDone, kernel.StatusFailed)
		if r.Status != kernel.StatusFailed || !strings.Contains(r.Error, "non_determinism") {
			t.Fatalf("run = %s %q, want failed with non_determinism", r.Status, r.Error)
		}
	})
}

func TestLeaseExpiryFencesTheZombie(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		zopts := fastOpts(t.TempDir())
		zopts.Lease, zopts.Heartbeat, zopts.CancelPoll = 300*time.Millisecond, time.Hour, time.Hour // the zombie never renews
		zombie := kernel.New(db.Store, zopts)
		entered, release := make(chan struct{}), make(chan struct{})
		var zombieErr atomic.Value
		var zombieSent atomic.Bool
		zlogic := func(rc kernel.RunContext) (kernel.Result, error) {
			_, err := rc.Step(kernel.StepSpec{Kind: "test", Name: "w", Effect: kernel.EffectIdempotentWrite, Request: 1},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					close(entered)
					<-release
					return kernel.Outcome{Result: "zombie"}, nil
				})
			if err == nil {
				// The step's record waits for the run's next commit, which
				// is this effect's intent: fenced, so the effect never runs.
				_, err = rc.Step(kernel.StepSpec{Kind: "test", Name: "send", Effect: kernel.EffectNonIdempotent, Request: 2},
					func(ctx context.Context, key string) (kernel.Outcome, error) {
						zombieSent.Store(true)
						return kernel.Outcome{Result: "sent"}, nil
					})
			}
			zombieErr.Store(errBox{err})
			return kernel.Result{Status: kernel.StatusDone}, err
		}
		b.workerN(zombie, map[string]kernel.Logic{"lease": zlogic}, 1) // busy with the run, it cannot re-claim it
		_, rid := b.mission("lease", nil, kernel.Budget{})
		<-entered
		healthy := func(rc kernel.RunContext) (kernel.Result, error) {
			res, err := rc.Step(kernel.StepSpec{Kind: "test", Name: "w", Effect: kernel.EffectIdempotentWrite, Request: 1},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					return kernel.Outcome{Result: "healthy"}, nil
				})
			return kernel.Result{Status: kernel.StatusDone, Summary: string(res)}, err
		}
		b.worker(b.k, map[string]kernel.Logic{"lease": healthy})
		r := b.waitStatus(rid, kernel.StatusDone, kernel.StatusFailed)
		close(release)
		waitFor(t, 10*time.Second, "the zombie's step to return", func() (bool, string) { return zombieErr.Load() != nil, "" })
		mustErrIs(t, zombieErr.Load().(errBox).err, kernel.ErrLeaseLost)
		if zombieSent.Load() {
			t.Fatal("the zombie ran an effect after losing its lease")
		}
		if !strings.Contains(string(r.Result), "healthy") {
			t.Fatalf("result = %s, want the healthy worker's", r.Result)
		}
		steps := b.steps(rid)
		if len(steps) != 1 || string(steps[0].Result) != `"healthy"` {
			t.Fatalf("journal = %+v, want one step with the healthy result", steps)
		}
		if r.FencingToken < 2 {
			t.Errorf("fencing token = %d, want ≥ 2 after a second claim", r.FencingToken)
		}
	})
}

type errBox struct{ err error }

func TestWaitExpiry(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			out, err := rc.Wait(kernel.WaitApproval, map[string]string{"tool": "shell"}, 1)
			if err != nil {
				return kernel.Result{}, err
			}
			if out.Expired() {
				return kernel.Result{Status: kernel.StatusPartial, Summary: "expired"}, nil
			}
			return kernel.Result{Status: kernel.StatusDone}, nil
		}
		b.worker(b.k, map[string]kernel.Logic{"exp": logic})
		_, rid := b.mission("exp", nil, kernel.Budget{})
		w := b.pendingWait(rid)
		r := b.waitStatus(rid, kernel.StatusPartial, kernel.StatusDone, kernel.StatusFailed)
		if r.Status != kernel.StatusPartial {
			t.Fatalf("status = %s %s, want partial after expiry", r.Status, r.Error)
		}
		got, err := db.Store.GetWait(b.ctx, w.ID)
		if err != nil || got.Status != "expired" {
			t.Fatalf("wait = %s (%v), want expired", got.Status, err)
		}
	})
}

func TestCancel(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		entered := make(chan struct{}, 1)
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			var in struct{ Mode string }
			_ = json.Unmarshal(rc.Input(), &in)
			if in.Mode == "wait" {
				if _, err := rc.Wait(kernel.WaitQuestion, "q", 0); err != nil {
					return kernel.Result{}, err
				}
				return kernel.Result{Status: kernel.StatusDone}, nil
			}
			_, err := rc.Step(kernel.StepSpec{Kind: "test", Name: "block", Effect: kernel.EffectRead, Request: 0, Announce: true},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					entered <- struct{}{}
					<-ctx.Done()
					return kernel.Outcome{}, ctx.Err()
				})
			return kernel.Result{Status: kernel.StatusDone}, err
		}
		b.worker(b.k, map[string]kernel.Logic{"c": logic})

		t.Run("running", func(t *testing.T) {
			mid, rid := b.mission("c", map[string]string{"mode": "run"}, kernel.Budget{})
			<-entered
			if err := b.k.RequestCancel(b.ctx, mid); err != nil {
				t.Fatal(err)
			}
			r := b.waitStatus(rid, kernel.StatusCancelled, kernel.StatusDone, kernel.StatusFailed)
			if r.Status != kernel.StatusCancelled {
				t.Fatalf("status = %s, want cancelled", r.Status)
			}
			if s := b.steps(rid); len(s) != 1 || s[0].Status != "started" {
				t.Errorf("interrupted step = %+v, want left started", s)
			}
		})
		t.Run("waiting", func(t *testing.T) {
			mid, rid := b.mission("c", map[string]string{"mode": "wait"}, kernel.Budget{})
			w := b.pendingWait(rid)
			b.waitStatus(rid, kernel.StatusWaiting)
			if err := b.k.RequestCancel(b.ctx, rid); err != nil {
				t.Fatal(err)
			}
			r, _ := db.Store.GetRun(b.ctx, rid)
			if r.Status != kernel.StatusCancelled {
				t.Fatalf("status right after cancel = %s, want cancelled at once", r.Status)
			}
			got, _ := db.Store.GetWait(b.ctx, w.ID)
			m, _ := db.Store.GetMission(b.ctx, mid)
			if got.Status != "cancelled" || m.Status != kernel.StatusCancelled {
				t.Fatalf("wait = %s, mission = %s; want both cancelled", got.Status, m.Status)
			}
		})
	})
}

// modelStep is a model_call step costing usd.
func modelStep(rc kernel.RunContext, i int, usd float64) error {
	_, err := rc.Step(kernel.StepSpec{Kind: "model_call", Name: "model", Effect: kernel.EffectModelCall, Request: i},
		func(context.Context, string) (kernel.Outcome, error) {
			return kernel.Outcome{Result: i, Usage: kernel.Usage{InputTokens: 100, OutputTokens: 10, CostUSD: usd}}, nil
		})
	return err
}

func TestBudgetHardStop(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			for i := 0; i < 100; i++ {
				if err := modelStep(rc, i, 0.02); err != nil {
					return kernel.Result{}, err
				}
			}
			return kernel.Result{Status: kernel.StatusDone}, nil
		}
		b.worker(b.k, map[string]kernel.Logic{"budget": logic})
		mid, rid := b.mission("budget", nil, kernel.Budget{USD: 0.05})
		r := b.waitStatus(rid, kernel.StatusBudgetExhausted, kernel.StatusDone, kernel.StatusFailed)
		if r.Status != kernel.StatusBudgetExhausted {
			t.Fatalf("status = %s %s", r.Status, r.Error)
		}
		if n := len(b.steps(rid)); n != 3 {
			t.Errorf("model calls = %d, want 3 (0.02 × 3 ≥ 0.05)", n)
		}
		m, _ := db.Store.GetMission(b.ctx, mid)
		if m.SpentUSD < 0.0599 || m.SpentUSD > 0.0601 || r.Turns != 3 {
			t.Errorf("mission spent %.4f turns %d, want 0.06 and 3", m.SpentUSD, r.Turns)
		}
	})
}

func TestDailyCap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		if err := b.k.SetDailyCap(b.ctx, 0.03); err != nil {
			t.Fatal(err)
		}
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			for i := 0; i < 2; i++ {
				if err := modelStep(rc, i, 0.02); err != nil {
					return kernel.Result{}, err
				}
			}
			return kernel.Result{Status: kernel.StatusDone}, nil
		}
		b.worker(b.k, map[string]kernel.Logic{"cap": logic})
		_, r1 := b.mission("cap", nil, kernel.Budget{})
		if r := b.waitStatus(r1, kernel.StatusDone, kernel.StatusBudgetExhausted, kernel.StatusFailed); r.Status != kernel.StatusDone {
			t.Fatalf("first mission = %s, want done (0.04 spent, cap reached after it)", r.Status)
		}
		_, r2 := b.mission("cap", nil, kernel.Budget{})
		r := b.waitStatus(r2, kernel.StatusDone, kernel.StatusBudgetExhausted, kernel.StatusFailed)
		if r.Status != kernel.StatusBudgetExhausted || !strings.Contains(r.Error, "daily") {
			t.Fatalf("second mission = %s %q, want budget_exhausted by the daily cap", r.Status, r.Error)
		}
		if n := len(b.steps(r2)); n != 0 {
			t.Errorf("second mission made %d model calls, want 0", n)
		}
	})
}

func TestDurableWaitAndSleepSurviveRestart(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		c := newCounter()
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			if _, err := pure(rc, c, "a", 1); err != nil {
				return kernel.Result{}, err
			}
			out, err := rc.Wait(kernel.WaitApproval, map[string]string{"tool": "git_push"}, 3600)
			if err != nil {
				return kernel.Result{}, err
			}
			t0, err := rc.Now()
			if err != nil {
				return kernel.Result{}, err
			}
			if err := rc.Sleep(400); err != nil {
				return kernel.Result{}, err
			}
			t1, err := rc.Now()
			if err != nil {
				return kernel.Result{}, err
			}
			if t1-t0 < 400 {
				return kernel.Result{Status: kernel.StatusFailed, Summary: "woke early"}, nil
			}
			return kernel.Result{Status: kernel.StatusDone, Summary: string(out.Resolution)}, nil
		}
		logics := map[string]kernel.Logic{"durable": logic}
		stop1 := b.worker(kernel.New(db.Store, fastOpts(t.TempDir())), logics)
		_, rid := b.mission("durable", nil, kernel.Budget{})
		w := b.pendingWait(rid)
		stop1() // the worker goes away while the run waits
		if _, err := b.k.ResolveWait(b.ctx, w.ID, map[string]bool{"approved": true}, "owner"); err != nil {
			t.Fatal(err)
		}
		stop2 := b.worker(kernel.New(db.Store, fastOpts(t.TempDir())), logics)
		waitFor(t, 10*time.Second, "the sleep to be journaled", func() (bool, string) {
			for _, s := range b.steps(rid) {
				if s.Kind == kernel.KindTimer {
					return true, ""
				}
			}
			return false, ""
		})
		stop2() // and again while it sleeps
		b.worker(kernel.New(db.Store, fastOpts(t.TempDir())), logics)
		r := b.waitStatus(rid, kernel.StatusDone, kernel.StatusFailed)
		if r.Status != kernel.StatusDone || !strings.Contains(string(r.Result), "approved") {
			t.Fatalf("run = %s %s %s", r.Status, r.Error, r.Result)
		}
		if c.get("a") != 1 {
			t.Errorf("step a ran %d times across restarts, want 1", c.get("a"))
		}
	})
}

func TestOwnerMessagesAreReplayStable(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			first, err := rc.OwnerMessages()
			if err != nil {
				return kernel.Result{}, err
			}
			if _, err := rc.Wait(kernel.WaitQuestion, "q", 0); err != nil {
				return kernel.Result{}, err
			}
			second, err := rc.OwnerMessages()
			if err != nil {
				return kernel.Result{}, err
			}
			body, _ := json.Marshal([][]kernel.OwnerMessage{first, second})
			return kernel.Result{Status: kernel.StatusDone, Payload: body}, nil
		}
		_, rid := b.mission("msgs", nil, kernel.Budget{})
		if _, err := b.k.PostOwnerMessage(b.ctx, rid, "A"); err != nil {
			t.Fatal(err)
		}
		b.worker(b.k, map[string]kernel.Logic{"msgs": logic})
		w := b.pendingWait(rid)
		if _, err := b.k.PostOwnerMessage(b.ctx, rid, "B"); err != nil {
			t.Fatal(err)
		}
		if _, err := b.k.ResolveWait(b.ctx, w.ID, "go", "owner"); err != nil {
			t.Fatal(err)
		}
		r := b.waitStatus(rid, kernel.StatusDone, kernel.StatusFailed)
		var res kernel.Result
		_ = json.Unmarshal(r.Result, &res)
		var got [][]kernel.OwnerMessage
		if err := json.Unmarshal(res.Payload, &got); err != nil || len(got) != 2 || len(got[0]) != 1 || got[0][0].Text != "A" || len(got[1]) != 1 || got[1][0].Text != "B" {
			t.Fatalf("messages = %s (%v); want [[A] [B]]: the replayed first read must not see B", res.Payload, err)
		}
	})
}

func TestBadInputIsTypedAndWritesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		ctx := b.ctx
		_, err := b.k.PostOwnerMessage(ctx, "no-such-run", "hi")
		mustErrIs(t, err, kernel.ErrNotFound)
		_, err = b.k.ResolveWait(ctx, "no-such-wait", "x", "owner")
		mustErrIs(t, err, kernel.ErrNotFound)
		mustErrIs(t, b.k.RequestCancel(ctx, "nope"), kernel.ErrNotFound)
		_, err = b.k.ResolveWait(ctx, "w", json.RawMessage("{not json"), "owner")
		mustErrIs(t, err, kernel.ErrInvalidInput)
		_, _, err = b.k.CreateMission(ctx, kernel.MissionSpec{Logic: "x", Budget: kernel.Budget{USD: -1}})
		mustErrIs(t, err, kernel.ErrInvalidInput)
		_, _, err = b.k.CreateMission(ctx, kernel.MissionSpec{Logic: "x", Input: func() {}})
		mustErrIs(t, err, kernel.ErrInvalidInput)
		ms, _ := db.Store.ListMissions(ctx, store.ListMissionsParams{})
		if len(ms) != 0 {
			t.Fatalf("bad input created %d missions", len(ms))
		}
		_, _, err = b.k.OpenArtifact(ctx, "../../etc/passwd")
		mustErrIs(t, err, kernel.ErrInvalidInput)

		// A step whose request cannot be hashed fails typed, records nothing.
		var stepErr atomic.Value
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			_, err := rc.Step(kernel.StepSpec{Kind: "test", Name: "bad", Effect: kernel.EffectPure, Request: make(chan int)},
				func(context.Context, string) (kernel.Outcome, error) { return kernel.Outcome{}, nil })
			stepErr.Store(errBox{err})
			return kernel.Result{Status: kernel.StatusFailed, Summary: "bad request"}, nil
		}
		b.worker(b.k, map[string]kernel.Logic{"bad": logic})
		_, rid := b.mission("bad", nil, kernel.Budget{})
		b.waitStatus(rid, kernel.StatusFailed)
		mustErrIs(t, stepErr.Load().(errBox).err, kernel.ErrInvalidInput)
		if s := b.steps(rid); len(s) != 0 {
			t.Fatalf("a malformed request wrote %d steps", len(s))
		}
		if errors.Is(stepErr.Load().(errBox).err, kernel.ErrNotFound) {
			t.Fatal("error codes must not match each other")
		}
	})
}

func TestArtifactsRoundTrip(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		sha, size, err := b.k.PutArtifact(b.ctx, strings.NewReader("hello artifact"), kernel.ArtifactMeta{Name: "out.txt", Mime: "text/plain", RunID: "r"})
		if err != nil || size != 14 || len(sha) != 64 {
			t.Fatalf("put = %s %d %v", sha, size, err)
		}
		f, meta, err := b.k.OpenArtifact(b.ctx, sha)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		buf := make([]byte, 64)
		n, _ := f.Read(buf)
		if string(buf[:n]) != "hello artifact" || meta.Name != "out.txt" || meta.Mime != "text/plain" {
			t.Fatalf("got %q %+v", buf[:n], meta)
		}
	})
}
