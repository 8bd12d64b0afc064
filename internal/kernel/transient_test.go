package kernel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storeopen"
	"github.com/aos-run/aos/internal/store/storetest"
)

// cross is two kernels over two separate Store instances of one database,
// as the worker and the server of aos up are, with a run on kernel A that
// executes what the test hands it.
type cross struct {
	tb   testing.TB
	a, b *kernel.Kernel
	stB  store.Store
	pump chan func(kernel.RunContext)
	done chan struct{}
}

func newCross(tb testing.TB, db storetest.DB) *cross {
	tb.Helper()
	stB, err := storeopen.Open(context.Background(), db.DSN)
	if err != nil {
		tb.Fatalf("open a second store instance: %v", err)
	}
	tb.Cleanup(func() { _ = stB.Close() })
	x := &cross{tb: tb, a: kernel.New(db.Store, fastOpts(tb.TempDir())), b: kernel.New(stB, fastOpts(tb.TempDir())),
		stB: stB, pump: make(chan func(kernel.RunContext)), done: make(chan struct{})}
	logic := func(rc kernel.RunContext) (kernel.Result, error) {
		for {
			select {
			case f, ok := <-x.pump:
				if !ok {
					return kernel.Result{Status: kernel.StatusDone}, nil
				}
				f(rc)
				x.done <- struct{}{}
			case <-rc.Context().Done():
				return kernel.Result{}, context.Cause(rc.Context())
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := x.a.RunWorker(ctx, kernel.WorkerConfig{Concurrency: 1, Logics: map[string]kernel.Logic{"pump": logic}}); err != nil {
			tb.Errorf("worker: %v", err)
		}
	})
	tb.Cleanup(func() { cancel(); wg.Wait() })
	if _, _, err := x.a.CreateMission(context.Background(), kernel.MissionSpec{Title: "t", Logic: "pump"}); err != nil {
		tb.Fatal(err)
	}
	return x
}

// run executes f inside the run on kernel A and waits for it.
func (x *cross) run(f func(rc kernel.RunContext)) {
	x.tb.Helper()
	select {
	case x.pump <- f:
	case <-time.After(20 * time.Second):
		x.tb.Fatal("the pump run did not start")
	}
	<-x.done
}

// collect reads transient events of kind from ch until until returns true
// for one (which is included), failing after d.
func collect(tb testing.TB, ch <-chan kernel.TransientEvent, d time.Duration, until func(kernel.TransientEvent) bool) []kernel.TransientEvent {
	tb.Helper()
	var got []kernel.TransientEvent
	timeout := time.After(d)
	for {
		select {
		case e, ok := <-ch:
			if !ok {
				tb.Fatalf("subscription closed after %d events", len(got))
			}
			got = append(got, e)
			if until(e) {
				return got
			}
		case <-timeout:
			tb.Fatalf("timed out after %s with %d events", d, len(got))
		}
	}
}

func payloadOf(tb testing.TB, e kernel.TransientEvent) map[string]any {
	tb.Helper()
	raw, err := json.Marshal(e.Payload)
	if err != nil {
		tb.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		tb.Fatal(err)
	}
	return m
}

// sentinel publishes a batch of a foreign origin through the second
// store: a subscriber that sees it has seen everything published before.
func (x *cross) sentinel(ctx context.Context) {
	x.tb.Helper()
	if err := x.stB.Publish(ctx, store.ChannelEvents, []byte(`{"o":"sentinel","e":[{"m":"","r":"","k":"test.sentinel","p":{}}]}`)); err != nil {
		x.tb.Fatal(err)
	}
}

func isKind(k string) func(kernel.TransientEvent) bool {
	return func(e kernel.TransientEvent) bool { return e.Kind == k }
}

// TestTransientEventsCrossProcesses: transient events a run emits through
// kernel A reach a subscriber of kernel B (another Store instance, as
// another process) exactly once and in order, and A's own subscriber gets
// each once, not again through the cross-process path.
func TestTransientEventsCrossProcesses(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		x := newCross(t, db)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		subB := x.b.SubscribeTransient(ctx)
		subA := x.a.SubscribeTransient(ctx)
		const n = 100 // twice this fits a subscriber's buffer, so a duplicate shows, not a drop
		var missionID, runID string
		x.run(func(rc kernel.RunContext) {
			missionID, runID = rc.MissionID(), rc.RunID()
			for i := range n {
				rc.EmitTransient("test.delta", map[string]any{"i": i, "text": fmt.Sprintf("token %d ", i)})
			}
		})
		waitFor(t, 10*time.Second, "A to publish every event", func() (bool, string) {
			s := x.a.TransientStats()
			return s.Published == n, fmt.Sprintf("%+v", s)
		})
		x.sentinel(ctx)
		for name, sub := range map[string]<-chan kernel.TransientEvent{"B": subB, "A": subA} {
			got := collect(t, sub, 10*time.Second, isKind("test.sentinel"))
			got = got[:len(got)-1]
			if len(got) != n {
				t.Fatalf("%s got %d events before the sentinel, want %d", name, len(got), n)
			}
			for i, e := range got {
				p := payloadOf(t, e)
				if e.Kind != "test.delta" || e.MissionID != missionID || e.RunID != runID || p["i"] != float64(i) {
					t.Fatalf("%s event %d = %+v %v", name, i, e, p)
				}
			}
		}
		// The counters move after the hub delivered the events: wait for
		// them rather than read them at once.
		waitFor(t, 10*time.Second, "B's counters", func() (bool, string) {
			s := x.b.TransientStats()
			return s.Received == n+1, fmt.Sprintf("%+v", s)
		})
		if s := x.b.TransientStats(); s.Received != n+1 || s.DroppedSlowSubscriber != 0 {
			t.Errorf("B's stats %+v, want %d received and no drop", s, n+1)
		}
		waitFor(t, 10*time.Second, "A's counters", func() (bool, string) {
			s := x.a.TransientStats()
			return s.Received >= 1, fmt.Sprintf("%+v", s)
		})
		if s := x.a.TransientStats(); s.Received != 1 || s.Batches >= n {
			t.Errorf("A's stats %+v: want only the sentinel received, and events batched", s)
		}
	})
}

// TestStalledSubscriberDoesNotBlockTheEmitter: a run emits 10,000 events
// while subscribers in both kernels never read; the emits return, each
// delivery past the stalled subscriber's buffer is skipped and counted,
// and the run goes on. A fresh subscriber then still receives.
func TestStalledSubscriberDoesNotBlockTheEmitter(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		x := newCross(t, db)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		subB := x.b.SubscribeTransient(ctx) // never read
		subA := x.a.SubscribeTransient(ctx) // never read
		const n, buffer = 10000, 256        // buffer: a subscriber's (docs/KERNEL.md)
		var stats kernel.TransientStats
		emit := func(rc kernel.RunContext) {
			for i := range n {
				rc.EmitTransient("test.delta", map[string]any{"i": i, "text": strings.Repeat("y", 40)})
			}
			stats = x.a.TransientStats()
		}
		select {
		case x.pump <- emit:
		case <-time.After(20 * time.Second):
			t.Fatal("the pump run did not start")
		}
		// Neither subscriber reads until the test ends, so an emitter that
		// waited for them would never return, and one that waited a
		// little for each event would exceed the bound, which is far above
		// what the emits take on a loaded machine under -race (0.1-0.2 s
		// on an idle one).
		start := time.Now()
		select {
		case <-x.done:
		case <-time.After(10 * time.Second):
			// Let a blocked emitter finish, so that the test can end.
			for _, sub := range []<-chan kernel.TransientEvent{subA, subB} {
				go func() {
					for range sub {
					}
				}()
			}
			go func() { <-x.done }()
			t.Fatalf("%d EmitTransient calls to stalled subscribers had not returned after 10 s", n)
		}
		t.Logf("%s: %d EmitTransient calls returned in %s", db.Driver, n, time.Since(start))
		// Each emit past A's subscriber's buffer found it full and went
		// on, counting the skipped delivery.
		if stats.DroppedSlowSubscriber != n-buffer {
			t.Errorf("A's stats %+v when the emits returned: want %d deliveries to its stalled subscriber skipped", stats, n-buffer)
		}
		waitFor(t, 20*time.Second, "A to flush its outbox", func() (bool, string) {
			s := x.a.TransientStats()
			return s.Published+s.DroppedQueueFull+s.PublishFailed == n, fmt.Sprintf("%+v", s)
		})
		if s := x.a.TransientStats(); s.PublishFailed != 0 {
			t.Errorf("A's stats %+v: want no failed publish", s)
		}
		// B may still be delivering the flood to its subscribers, so a
		// fresh one may drop the first probes: send until one arrives.
		fresh := x.b.SubscribeTransient(ctx)
		deadline := time.Now().Add(20 * time.Second)
		for seen := false; !seen; {
			if time.Now().After(deadline) {
				t.Fatal("a fresh subscriber of B got no event after the flood")
			}
			x.run(func(rc kernel.RunContext) { rc.EmitTransient("test.after", nil) })
			probe := time.After(time.Second)
			for wait := true; wait && !seen; {
				select {
				case e := <-fresh:
					seen = e.Kind == "test.after"
				case <-probe:
					wait = false
				}
			}
		}
		if s := x.b.TransientStats(); s.DroppedSlowSubscriber == 0 {
			t.Errorf("B's stats %+v: want drops counted for its stalled subscriber", s)
		}
	})
}

// TestOversizeTransientEventsAreSplitOrCounted: a model.delta larger than
// a payload arrives as several deltas whose texts, each valid UTF-8, join
// to the original; one beyond the part limit arrives cut, counted; an
// oversize event without text is dropped, counted.
func TestOversizeTransientEventsAreSplitOrCounted(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		x := newCross(t, db)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		sub := x.b.SubscribeTransient(ctx)
		max := db.Store.MaxPayload()
		unit := "héllo \"wörld\"\n\t✓ 🙂 <&> \x01 "
		text := strings.Repeat(unit, 3*max/len(unit))
		huge := strings.Repeat(unit, 70*max/len(unit)) // more than 64 parts
		x.run(func(rc kernel.RunContext) {
			rc.EmitTransient("model.delta", map[string]any{"turn": 1, "type": "text", "text": text})
			rc.EmitTransient("test.blob", map[string]any{"blob": strings.Repeat("z", 2*max)})
			rc.EmitTransient("test.mark", nil)
			rc.EmitTransient("model.delta", map[string]any{"turn": 2, "type": "text", "text": huge})
			rc.EmitTransient("test.end", nil)
		})
		got := collect(t, sub, 20*time.Second, isKind("test.end"))
		joined := map[float64]*strings.Builder{1: {}, 2: {}}
		parts := map[float64]int{}
		for _, e := range got {
			switch e.Kind {
			case "model.delta":
				p := payloadOf(t, e)
				s, _ := p["text"].(string)
				if !utf8.ValidString(s) || p["type"] != "text" {
					t.Fatalf("a part is not valid UTF-8 text: %.80q %v", s, p["type"])
				}
				turn, _ := p["turn"].(float64)
				joined[turn].WriteString(s)
				parts[turn]++
			case "test.blob":
				t.Fatal("the oversize event without text arrived")
			}
		}
		if joined[1].String() != text || parts[1] < 3 {
			t.Errorf("turn 1: %d parts joining to %d bytes, want several joining to the %d sent", parts[1], joined[1].Len(), len(text))
		}
		if j := joined[2].String(); parts[2] != 64 || !strings.HasPrefix(huge, j) || len(j) >= len(huge) {
			t.Errorf("turn 2: %d parts joining to %d of %d bytes, want 64 parts of a prefix", parts[2], len(j), len(huge))
		}
		if s := x.a.TransientStats(); s.Split != 2 || s.Truncated != 1 || s.DroppedOversize != 1 {
			t.Errorf("A's stats %+v, want 2 split, 1 truncated, 1 dropped oversize", s)
		}
	})
}
