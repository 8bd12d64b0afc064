package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// The conformance suite: every query behaves the same on both drivers.

func seedRun(t *testing.T, q store.Queries, id string, created int64) {
	t.Helper()
	ctx := context.Background()
	if err := q.InsertMission(ctx, store.Mission{ID: "m-" + id, Status: "queued", RootRunID: id, CreatedAt: created, UpdatedAt: created}); err != nil {
		t.Fatal(err)
	}
	if err := q.InsertRun(ctx, store.Run{ID: id, MissionID: "m-" + id, Logic: "l", Status: "queued", CreatedAt: created, UpdatedAt: created}); err != nil {
		t.Fatal(err)
	}
}

func TestClaimAndFence(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		seedRun(t, s, "b", 2)
		seedRun(t, s, "a", 1)
		r, err := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: "w1", Now: 10, LeaseUntil: 100})
		if err != nil || r.ID != "a" || r.FencingToken != 1 || r.Status != "running" || r.LeaseOwner != "w1" {
			t.Fatalf("first claim = %+v, %v; want the oldest run, token 1", r, err)
		}
		if _, err := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: "w1", Now: 10, LeaseUntil: 100, Logics: []string{"other"}}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("claim of another logic = %v, want ErrNotFound", err)
		}
		f := store.Fence{RunID: "a", Owner: "w1", Token: 1}
		if _, err := s.FenceRun(ctx, f, 20, 200); err != nil {
			t.Fatalf("fence by holder: %v", err)
		}
		// Lease expires at 200; a claim at 150 takes b, at 250 re-takes a.
		r2, _ := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: "w2", Now: 150, LeaseUntil: 300})
		if r2.ID != "b" {
			t.Fatalf("second claim = %s, want b (a is leased until 200)", r2.ID)
		}
		r3, err := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: "w2", Now: 250, LeaseUntil: 400})
		if err != nil || r3.ID != "a" || r3.FencingToken != 2 {
			t.Fatalf("reclaim = %+v %v; want a with token 2", r3, err)
		}
		if _, err := s.FenceRun(ctx, f, 260, 0); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("zombie fence = %v, want ErrFenced", err)
		}
		if err := s.SetRunState(ctx, store.SetRunStateParams{Fence: f, Status: "done", Now: 260}); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("zombie state write = %v, want ErrFenced", err)
		}
		if _, err := s.RequestRunCancel(ctx, "a", 270); err != nil {
			t.Fatal(err)
		}
		cancel, err := s.FenceRun(ctx, store.Fence{RunID: "a", Owner: "w2", Token: 2}, 280, 0)
		if err != nil || !cancel {
			t.Fatalf("fence after cancel = %v %v, want cancel flag", cancel, err)
		}
	})
}

func TestConcurrentClaimsTakeEachRunOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		const n = 40
		for i := 0; i < n; i++ {
			seedRun(t, s, fmt.Sprintf("r%02d", i), int64(i))
		}
		var mu sync.Mutex
		got := map[string]int{}
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					r, err := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: fmt.Sprint("w", w), Now: 1000, LeaseUntil: 99999})
					if errors.Is(err, store.ErrNotFound) {
						return
					}
					if err != nil {
						if s.IsTransient(err) {
							continue
						}
						t.Error(err)
						return
					}
					mu.Lock()
					got[r.ID]++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(got) != n {
			t.Fatalf("claimed %d distinct runs, want %d", len(got), n)
		}
		for id, c := range got {
			if c != 1 {
				t.Errorf("run %s claimed %d times", id, c)
			}
		}
	})
}

func TestStepsWaitsEventsConflicts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		seedRun(t, s, "r", 1)
		// JSON comes back byte for byte (no key reordering, no reformatting).
		req := []byte(`{"z":1,  "a":[3,2,1],"m":{"y":"é","b":null}}`)
		st := store.Step{RunID: "r", Seq: 0, Kind: "k", Name: "n", Effect: "pure", RequestHash: "h", Request: req, Status: "started", IdemKey: "r/0", StartedAt: 1}
		if err := s.InsertStep(ctx, st); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertStep(ctx, st); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate step = %v, want ErrConflict", err)
		}
		if err := s.FinishStep(ctx, store.FinishStepParams{RunID: "r", Seq: 0, Status: "completed", Result: req, Now: 2}); err != nil {
			t.Fatal(err)
		}
		if err := s.FinishStep(ctx, store.FinishStepParams{RunID: "r", Seq: 0, Status: "completed", Result: []byte("1"), Now: 3}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second finish = %v, want ErrConflict", err)
		}
		got, _ := s.GetStep(ctx, "r", 0)
		if string(got.Request) != string(req) || string(got.Result) != string(req) {
			t.Fatalf("json changed: %s / %s", got.Request, got.Result)
		}
		if _, err := s.GetStep(ctx, "r", 9); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing step = %v, want ErrNotFound", err)
		}
		w := store.Wait{ID: "w", RunID: "r", MissionID: "m-r", StepSeq: 1, Kind: "question", Payload: []byte(`{}`), Status: "pending", ResolveBy: 50, CreatedAt: 1}
		if err := s.InsertWait(ctx, w); err != nil {
			t.Fatal(err)
		}
		due, _ := s.DueWaits(ctx, 49, 10)
		due2, _ := s.DueWaits(ctx, 50, 10)
		if len(due) != 0 || len(due2) != 1 {
			t.Fatalf("due waits at 49/50 = %d/%d, want 0/1", len(due), len(due2))
		}
		if err := s.ResolveWait(ctx, store.ResolveWaitParams{ID: "w", Status: "resolved", Resolution: []byte(`"yes"`), Now: 5}); err != nil {
			t.Fatal(err)
		}
		if err := s.ResolveWait(ctx, store.ResolveWaitParams{ID: "w", Status: "expired", Now: 6}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second resolve = %v, want ErrConflict", err)
		}
		var last int64
		for i := 0; i < 5; i++ {
			mission := "m-r"
			if i%2 == 1 {
				mission = "other"
			}
			id, err := s.InsertEvent(ctx, store.Event{MissionID: mission, RunID: "r", Kind: "k", Payload: []byte(fmt.Sprint(i)), CreatedAt: 1})
			if err != nil || id <= last {
				t.Fatalf("event id %d after %d (%v): ids must increase", id, last, err)
			}
			last = id
		}
		evs, _ := s.ListEvents(ctx, store.ListEventsParams{MissionID: "m-r"})
		all, _ := s.ListEvents(ctx, store.ListEventsParams{After: evs[0].ID})
		if len(evs) != 3 || len(all) != 4 {
			t.Fatalf("events by mission = %d (want 3), after first = %d (want 4)", len(evs), len(all))
		}
	})
}

// TestInsertEventsInOrder: InsertEvents writes every event, in the order
// given, across statements of MaxEventsPerInsert and between single
// inserts; an empty list writes nothing.
func TestInsertEventsInOrder(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		ev := func(i int) store.Event {
			return store.Event{MissionID: "m", RunID: "r", Seq: &i, Kind: "k", Payload: []byte(fmt.Sprint(i)), CreatedAt: int64(i)}
		}
		n := 2*store.MaxEventsPerInsert + 5
		err := s.Tx(ctx, func(q store.Queries) error {
			if _, err := q.InsertEvent(ctx, ev(0)); err != nil {
				return err
			}
			var es []store.Event
			for i := 1; i < n; i++ {
				es = append(es, ev(i))
			}
			if err := q.InsertEvents(ctx, es); err != nil {
				return err
			}
			if err := q.InsertEvents(ctx, nil); err != nil {
				return err
			}
			_, err := q.InsertEvent(ctx, ev(n))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := s.ListEvents(ctx, store.ListEventsParams{MissionID: "m"})
		if err != nil || len(evs) != n+1 {
			t.Fatalf("events = %d (%v), want %d", len(evs), err, n+1)
		}
		for i, e := range evs {
			if e.Seq == nil || *e.Seq != i || string(e.Payload) != fmt.Sprint(i) || e.Trust != "system" || e.CreatedAt != int64(i) {
				t.Fatalf("event %d = %+v (seq %v), want the %dth inserted", i, e, e.Seq, i)
			}
		}
	})
}

// TestInsertStepsConflict: InsertSteps writes every row across statements
// of MaxStepsPerInsert; one row that exists already fails it with
// ErrConflict, and in a transaction nothing of the list is kept.
func TestInsertStepsConflict(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		seedRun(t, s, "r", 1)
		step := func(seq int) store.Step {
			return store.Step{RunID: "r", Seq: seq, Kind: "k", Name: fmt.Sprint("s", seq), Effect: "pure", Request: []byte("{}"), Status: "completed", Result: []byte(fmt.Sprint(seq))}
		}
		var ss []store.Step
		for i := range store.MaxStepsPerInsert + 3 {
			ss = append(ss, step(i))
		}
		if err := s.InsertSteps(ctx, ss); err != nil {
			t.Fatal(err)
		}
		got, err := s.ListSteps(ctx, "r", -1, 0)
		if err != nil || len(got) != len(ss) {
			t.Fatalf("steps = %d (%v), want %d", len(got), err, len(ss))
		}
		for i, g := range got {
			if g.Seq != i || g.Name != fmt.Sprint("s", i) || string(g.Result) != fmt.Sprint(i) {
				t.Fatalf("step %d = %+v", i, g)
			}
		}
		n := len(ss)
		err = s.Tx(ctx, func(q store.Queries) error {
			return q.InsertSteps(ctx, []store.Step{step(n), step(n - 1), step(n + 1)})
		})
		if !errors.Is(err, store.ErrConflict) {
			t.Fatalf("a list with a recorded step = %v, want ErrConflict", err)
		}
		if got, _ := s.ListSteps(ctx, "r", -1, 0); len(got) != n {
			t.Errorf("after the refused list: %d steps, want %d", len(got), n)
		}
	})
}

func TestSpendSettingsRulesWorkers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		for _, usd := range []float64{0.25, 0.5} {
			if err := s.AddSpend(ctx, "2026-11-30", usd); err != nil {
				t.Fatal(err)
			}
		}
		if v, _ := s.GetSpend(ctx, "2026-11-30"); v != 0.75 {
			t.Errorf("spend = %v, want 0.75", v)
		}
		if v, err := s.GetSpend(ctx, "2026-12-01"); v != 0 || err != nil {
			t.Errorf("empty day = %v %v", v, err)
		}
		if _, err := s.GetSetting(ctx, "x"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("missing setting = %v", err)
		}
		_ = s.PutSetting(ctx, "x", []byte(`1`), 1)
		_ = s.PutSetting(ctx, "x", []byte(`2`), 2)
		if v, _ := s.GetSetting(ctx, "x"); string(v) != "2" {
			t.Errorf("setting = %s", v)
		}
		rules := []store.PolicyRule{{ID: "g", Tool: "shell", Decision: "deny", CreatedAt: 1}, {ID: "p", ProjectID: "p1", Tool: "shell", CommandPrefix: "go test", Decision: "allow", CreatedAt: 2},
			{ID: "q", ProjectID: "p2", Tool: "git_push", Decision: "allow", CreatedAt: 3}}
		for _, r := range rules {
			if err := s.InsertPolicyRule(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.InsertPolicyRule(ctx, rules[0]); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate rule = %v", err)
		}
		got, _ := s.ListPolicyRules(ctx, "p1")
		if len(got) != 2 || got[0].ID != "g" || got[1].CommandPrefix != "go test" {
			t.Errorf("rules for p1 = %+v", got)
		}
		if err := s.DeletePolicyRule(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("delete missing = %v", err)
		}
		_ = s.UpsertWorker(ctx, store.Worker{ID: "w", Version: "v", Hostname: "h", StartedAt: 1, LastSeen: 1})
		_ = s.UpsertWorker(ctx, store.Worker{ID: "w", Version: "v", Hostname: "h", StartedAt: 1, LastSeen: 9})
		ws, _ := s.ListWorkers(ctx)
		if len(ws) != 1 || ws[0].LastSeen != 9 {
			t.Errorf("workers = %+v", ws)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Errorf("migrating twice: %v", err)
		}
	})
}

func TestRetryStepAndWaitAttempts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		seedRun(t, s, "r", 1)
		st := store.Step{RunID: "r", Seq: 3, Kind: "tool_call", Name: "shell", Effect: "non_idempotent", RequestHash: "h", Request: []byte(`{}`), Status: "started", IdemKey: "r/3", StartedAt: 1}
		if err := s.InsertStep(ctx, st); err != nil {
			t.Fatal(err)
		}
		// A started step is not retried: only an answered question is.
		if err := s.RetryStep(ctx, store.RetryStepParams{RunID: "r", Seq: 3, Attempt: 0, Now: 2}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("retry of a started step = %v, want ErrConflict", err)
		}
		if err := s.MarkStepNeedsReconcile(ctx, "r", 3); err != nil {
			t.Fatal(err)
		}
		w0 := store.Wait{ID: "w0", RunID: "r", MissionID: "m-r", StepSeq: 3, Kind: "question", Payload: []byte(`{}`), Status: "pending", CreatedAt: 2}
		if err := s.InsertWait(ctx, w0); err != nil {
			t.Fatal(err)
		}
		if err := s.RetryStep(ctx, store.RetryStepParams{RunID: "r", Seq: 3, Attempt: 0, Now: 5}); err != nil {
			t.Fatal(err)
		}
		// The answer is used once: a second retry of attempt 0 conflicts.
		if err := s.RetryStep(ctx, store.RetryStepParams{RunID: "r", Seq: 3, Attempt: 0, Now: 6}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second retry = %v, want ErrConflict", err)
		}
		got, _ := s.GetStep(ctx, "r", 3)
		if got.Status != "started" || got.Attempt != 1 || got.StartedAt != 5 {
			t.Fatalf("retried step = %s attempt %d started %d, want started attempt 1 at 5", got.Status, got.Attempt, got.StartedAt)
		}
		// One question per attempt: a second question about attempt 0
		// conflicts; one about attempt 1 is the step's wait from now on.
		dup := w0
		dup.ID = "w0b"
		if err := s.InsertWait(ctx, dup); err == nil {
			t.Fatal("a second wait for the same step attempt was accepted")
		}
		w1 := w0
		w1.ID, w1.Attempt, w1.CreatedAt = "w1", 1, 7
		if err := s.InsertWait(ctx, w1); err != nil {
			t.Fatal(err)
		}
		w, err := s.GetWaitByStep(ctx, "r", 3)
		if err != nil || w.ID != "w1" || w.Attempt != 1 {
			t.Fatalf("wait by step = %s attempt %d (%v), want w1 attempt 1", w.ID, w.Attempt, err)
		}
	})
}

func TestLeaseHolderAndTakeOver(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		seedRun(t, s, "a", 1)
		seedRun(t, s, "b", 2)
		dead := store.LeaseHolder{Host: "h1", PID: 41, Proc: "boot/ns/123"}
		r, err := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: "w1", Holder: dead, Now: 10, LeaseUntil: 100})
		if err != nil || r.Holder != dead {
			t.Fatalf("claim = %+v %v; want the holder recorded", r.Holder, err)
		}
		if _, err := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: "w9", Holder: store.LeaseHolder{Host: "h2", PID: 7}, Now: 10, LeaseUntil: 100}); err != nil {
			t.Fatal(err)
		}
		got, _ := s.GetRun(ctx, "a")
		if got.Holder != dead {
			t.Fatalf("holder read back = %+v, want %+v", got.Holder, dead)
		}
		// Live leases held on h1: a only (b is on h2); none once expired.
		for _, c := range []struct {
			host    string
			now     int64
			mission string
			want    int
		}{{"h1", 50, "", 1}, {"h2", 50, "", 1}, {"h1", 50, "m-b", 0}, {"h1", 101, "", 0}} {
			rs, err := s.ListLeasedRuns(ctx, store.ListLeasedRunsParams{Host: c.host, Now: c.now, MissionID: c.mission})
			if err != nil || len(rs) != c.want {
				t.Fatalf("leased runs on %s at %d (mission %q) = %d %v, want %d", c.host, c.now, c.mission, len(rs), err, c.want)
			}
		}
		me := store.LeaseHolder{Host: "h1", PID: 42, Proc: "boot/ns/456"}
		old := store.Fence{RunID: "a", Owner: "w1", Token: 1}
		r, err = s.TakeOverRun(ctx, store.TakeOverRunParams{Old: old, WorkerID: "w2", Holder: me, Now: 20, LeaseUntil: 200})
		if err != nil || r.LeaseOwner != "w2" || r.FencingToken != 2 || r.Holder != me || r.LeaseExpiresAt != 200 {
			t.Fatalf("take over = %+v %v", r, err)
		}
		// Compare-and-set: the old fence no longer holds it.
		if _, err := s.TakeOverRun(ctx, store.TakeOverRunParams{Old: old, WorkerID: "w3", Holder: me, Now: 21, LeaseUntil: 200}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second take over = %v, want ErrConflict", err)
		}
		if _, err := s.FenceRun(ctx, old, 22, 0); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("dead holder's fence = %v, want ErrFenced", err)
		}
	})
}

// RenewLeases extends, in one statement, exactly the leases the worker
// still holds under their tokens, and reports cancel flags.
func TestRenewLeases(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		for i, id := range []string{"a", "b", "c", "d"} {
			seedRun(t, s, id, int64(i+1))
		}
		claim := func(w string, now, until int64) store.Run {
			t.Helper()
			r, err := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: w, Now: now, LeaseUntil: until})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		a, b, c := claim("w1", 10, 100), claim("w1", 10, 100), claim("w2", 10, 100)
		if _, err := s.RequestRunCancel(ctx, b.ID, 20); err != nil {
			t.Fatal(err)
		}
		// d is not running; a is held under an older token than asked; c
		// is w2's.
		held := []store.LeaseRef{{RunID: a.ID, Token: a.FencingToken}, {RunID: b.ID, Token: b.FencingToken},
			{RunID: c.ID, Token: c.FencingToken}, {RunID: "d", Token: 0}, {RunID: a.ID, Token: a.FencingToken + 7}}
		got, err := s.RenewLeases(ctx, store.RenewLeasesParams{Owner: "w1", Held: held, LeaseUntil: 500})
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]store.RenewedLease{}
		for _, l := range got {
			byID[l.RunID] = l
		}
		if len(got) != 2 || byID["a"].CancelRequested || !byID["b"].CancelRequested || byID["a"].Token != a.FencingToken {
			t.Fatalf("renewed = %+v, want a (no cancel) and b (cancel)", got)
		}
		for id, want := range map[string]int64{"a": 500, "b": 500, "c": 100, "d": 0} {
			if r, _ := s.GetRun(ctx, id); r.LeaseExpiresAt != want {
				t.Errorf("run %s lease ends at %d, want %d", id, r.LeaseExpiresAt, want)
			}
		}
		// After a takeover the old token renews nothing.
		if _, err := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: "w3", Now: 600, LeaseUntil: 700}); err != nil {
			t.Fatal(err)
		}
		got, err = s.RenewLeases(ctx, store.RenewLeasesParams{Owner: "w1", Held: held[:1], LeaseUntil: 900})
		if err != nil || len(got) != 0 {
			t.Fatalf("renewal after takeover = %+v %v, want none", got, err)
		}
		if got, err := s.RenewLeases(ctx, store.RenewLeasesParams{Owner: "w1", LeaseUntil: 900}); err != nil || len(got) != 0 {
			t.Fatalf("empty renewal = %+v %v", got, err)
		}
	})
}

// InsertMissionRun inserts its events in the order given, and a run
// inserted leased (a hand-off) is fenced by what was inserted: claimable
// only once its lease expired, under the next token.
func TestMissionRunInsertLeasedWithEvents(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		m := store.Mission{ID: "m", Title: "t", Status: "running", RootRunID: "r", CreatedAt: 1, UpdatedAt: 1}
		r := store.Run{ID: "r", MissionID: "m", Logic: "l", Status: "running", LeaseOwner: "w1", LeaseExpiresAt: 100, FencingToken: 1,
			StartedAt: 1, CreatedAt: 1, UpdatedAt: 1, Holder: store.LeaseHolder{Host: "h", PID: 7, Proc: "p"}}
		var es []store.Event
		for _, k := range []string{"mission.created", "run.claimed", "third"} {
			es = append(es, store.Event{MissionID: "m", RunID: "r", Kind: k, Payload: []byte(`{"k":"` + k + `"}`), CreatedAt: 1})
		}
		if err := s.InsertMissionRun(ctx, m, r, nil, es...); err != nil {
			t.Fatal(err)
		}
		got, err := s.ListEvents(ctx, store.ListEventsParams{MissionID: "m", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var kinds []string
		for _, e := range got {
			kinds = append(kinds, e.Kind+string(e.Payload))
		}
		if fmt.Sprint(kinds) != `[mission.created{"k":"mission.created"} run.claimed{"k":"run.claimed"} third{"k":"third"}]` {
			t.Fatalf("events = %v", kinds)
		}
		if rr, err := s.GetRun(ctx, "r"); err != nil || rr.LeaseOwner != "w1" || rr.FencingToken != 1 || rr.Holder.PID != 7 {
			t.Fatalf("run = %+v (%v)", rr, err)
		}
		if _, err := s.FenceRun(ctx, store.Fence{RunID: "r", Owner: "w1", Token: 1}, 0, 0); err != nil {
			t.Fatalf("the inserted lease does not fence: %v", err)
		}
		if _, err := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: "w2", Now: 50, LeaseUntil: 150}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("claim under the live inserted lease = %v, want ErrNotFound", err)
		}
		c, err := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: "w2", Now: 101, LeaseUntil: 200})
		if err != nil || c.ID != "r" || c.FencingToken != 2 {
			t.Fatalf("claim after expiry = %+v %v, want r under token 2", c, err)
		}
	})
}

// InsertMissionRun and EndRun write several rows atomically (one statement
// on PostgreSQL), the creation's audit record included; a failed insert
// writes no audit record, and a fenced EndRun writes nothing.
func TestMissionRunInsertAndEnd(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		m := store.Mission{ID: "m", Title: "t", Status: "queued", RootRunID: "r", CreatedAt: 1, UpdatedAt: 1}
		r := store.Run{ID: "r", MissionID: "m", Logic: "l", Status: "queued", CreatedAt: 1, UpdatedAt: 1}
		audit := func(target string) *store.AuditRecord {
			return &store.AuditRecord{At: 1, Actor: "owner", Action: "mission.create", Target: target, Detail: []byte(`{"model":"m"}`)}
		}
		if err := s.InsertMissionRun(ctx, m, r, audit("m"), store.Event{MissionID: "m", RunID: "r", Kind: "mission.created", Payload: []byte(`{"a":1}`), CreatedAt: 1}); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertMissionRun(ctx, store.Mission{ID: "m2", Status: "queued", RootRunID: "r"}, r, audit("m2"), store.Event{MissionID: "m2", Kind: "x", Payload: []byte(`{}`)}); err == nil {
			t.Fatal("a second run r was inserted")
		}
		if _, err := s.GetMission(ctx, "m2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("mission of a failed insert = %v, want none", err)
		}
		if as, err := s.ListAudit(ctx, store.ListAuditParams{Limit: 10}); err != nil || len(as) != 1 || as[0].Target != "m" || as[0].Action != "mission.create" || string(as[0].Detail) != `{"model":"m"}` {
			t.Fatalf("audit records = %+v, %v; want the one of m", as, err)
		}
		m3 := store.Mission{ID: "m3", Title: "t", Status: "queued", RootRunID: "r3", CreatedAt: 1, UpdatedAt: 1}
		r3 := store.Run{ID: "r3", MissionID: "m3", Logic: "l", Status: "done", CreatedAt: 1, UpdatedAt: 1} // never claimed below
		if err := s.InsertMissionRun(ctx, m3, r3, nil, store.Event{MissionID: "m3", RunID: "r3", Kind: "mission.created", Payload: []byte(`{}`), CreatedAt: 1}); err != nil {
			t.Fatalf("a creation without an audit record: %v", err)
		}
		if as, _ := s.ListAudit(ctx, store.ListAuditParams{Limit: 10}); len(as) != 1 {
			t.Fatalf("audit records after a creation without one = %+v", as)
		}
		got, err := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: "w", Now: 5, LeaseUntil: 50})
		if err != nil || got.StartedAt != 5 {
			t.Fatalf("claim = %+v %v, want started at 5", got, err)
		}
		end := func(token int64) error {
			return s.EndRun(ctx, store.SetRunStateParams{Fence: store.Fence{RunID: "r", Owner: "w", Token: token}, Status: "done", Result: []byte(`{"ok":true}`), EndedAt: 9, Now: 9},
				store.UpdateMissionStatusParams{ID: "m", Status: "done", Result: []byte(`{"ok":true}`), EndedAt: 9, Now: 9},
				store.Event{MissionID: "m", RunID: "r", Kind: "run.completed", Payload: []byte(`{"s":"done"}`), CreatedAt: 9})
		}
		events := func() []string {
			es, err := s.ListEvents(ctx, store.ListEventsParams{MissionID: "m", Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, e := range es {
				kinds = append(kinds, e.Kind)
			}
			return kinds
		}
		if err := end(got.FencingToken + 1); !errors.Is(err, store.ErrFenced) {
			t.Fatalf("fenced end = %v, want ErrFenced", err)
		}
		if mm, _ := s.GetMission(ctx, "m"); mm.Status != "queued" || len(events()) != 1 {
			t.Fatalf("a fenced end wrote: mission %s, events %v", mm.Status, events())
		}
		if err := end(got.FencingToken); err != nil {
			t.Fatal(err)
		}
		rr, _ := s.GetRun(ctx, "r")
		mm, _ := s.GetMission(ctx, "m")
		if rr.Status != "done" || rr.LeaseOwner != "" || mm.Status != "done" || string(mm.Result) != `{"ok":true}` || fmt.Sprint(events()) != "[mission.created run.completed]" {
			t.Fatalf("after end: run %s %q, mission %s %s, events %v", rr.Status, rr.LeaseOwner, mm.Status, mm.Result, events())
		}
	})
}

// ClaimStart claims, sets the mission running and records run.claimed in
// the kernel's canonical form, in one atomic write.
func TestClaimStart(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		seedRun(t, s, "a", 1)
		if err := s.InsertStep(ctx, store.Step{RunID: "a", Seq: 0, Kind: "k", Name: "n", Effect: "pure", Status: "completed", Request: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
		worker := `w"<&>\é`
		r, steps, err := s.ClaimStart(ctx, store.ClaimRunParams{WorkerID: worker, Now: 7, LeaseUntil: 70})
		if err != nil || r.ID != "a" || r.LeaseOwner != worker || r.StartedAt != 7 || len(steps) != 1 {
			t.Fatalf("claim start = %+v %d steps %v", r, len(steps), err)
		}
		if m, _ := s.GetMission(ctx, "m-a"); m.Status != "running" {
			t.Fatalf("mission status %s, want running", m.Status)
		}
		es, err := s.ListEvents(ctx, store.ListEventsParams{MissionID: "m-a", Limit: 10})
		if err != nil || len(es) != 1 {
			t.Fatalf("events = %+v %v", es, err)
		}
		if want := `{"replaySteps":1,"runId":"a","worker":"w\"<&>\\é"}`; es[0].Kind != "run.claimed" || string(es[0].Payload) != want {
			t.Fatalf("event %s %s, want run.claimed %s", es[0].Kind, es[0].Payload, want)
		}
		if _, _, err := s.ClaimStart(ctx, store.ClaimRunParams{WorkerID: "w", Now: 8, LeaseUntil: 80}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("second claim = %v, want ErrNotFound", err)
		}
	})
}
