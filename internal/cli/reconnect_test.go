package cli

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestWatchResumesAfterDisconnect: the network drops the watch's
// connection several times while the mission's events keep coming; the
// watch reconnects from its cursor and prints every event exactly once,
// in order, then exits with the mission's outcome.
func TestWatchResumesAfterDisconnect(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		r := setupRemote(t, db)
		m, err := r.svc.CreateMission(t.Context(), "test", mission.CreateRequest{Objective: "tick", Workspace: r.workspace("p"), Model: "claude-opus-5-5"})
		if err != nil {
			t.Fatal(err)
		}
		px := startProxy(t, strings.TrimPrefix(r.srv.URL, "http://"))
		r.env["AOS_SERVER"] = px.URL()

		live := &syncBuffer{}
		type result struct {
			out, errOut string
			code        exitCode
		}
		done := make(chan result, 1)
		go func() {
			out, errOut, code := runAOS(context.Background(), r.clientEnv(""), live, "mission", "watch", m.ID)
			done <- result{out, errOut, code}
		}()
		const batches, perBatch = 5, 40
		n := 0
		for b := 0; b < batches; b++ {
			for i := 0; i < perBatch; i++ {
				r.emit(m.ID, m.RootRunID, "owner.message", map[string]string{"text": fmt.Sprintf("tick %d", n)})
				n++
			}
			// Cut the connection once the watch is halfway into this
			// batch: the rest has committed and must come by the replay.
			mid := fmt.Sprintf("tick %d\n", n-perBatch/2)
			waitFor(t, 20*time.Second, mid, func() bool { return strings.Contains(live.String(), mid) }, live.String)
			if px.drop() == 0 {
				t.Fatalf("batch %d: no connection to drop", b)
			}
		}
		// End the mission once every tick is out. (Emitted earlier, on
		// PostgreSQL it can be positioned before the last tick although it
		// commits after it; see the report. The watch would then rightly
		// stop before that tick.)
		last := fmt.Sprintf("tick %d\n", n-1)
		waitFor(t, 20*time.Second, last, func() bool { return strings.Contains(live.String(), last) }, live.String)
		r.emit(m.ID, m.RootRunID, "run.completed", map[string]string{"status": "done", "summary": "all ticks"})

		var res result
		select {
		case res = <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("watch did not end:\n%s", live.String())
		}
		if res.code != 0 {
			t.Fatalf("watch: exit %d\n%s\n%s", res.code, res.out, res.errOut)
		}
		// Every event exactly once, in the stream's order: the order of
		// the store's positions (on PostgreSQL assigned after commit, which
		// is not always the order of the ticks; see the report).
		var printed []string
		for _, tk := range regexp.MustCompile(`✉ owner: (tick \d+)`).FindAllStringSubmatch(res.out, -1) {
			printed = append(printed, tk[1])
		}
		evs, err := r.st.ListEvents(context.Background(), store.ListEventsParams{MissionID: m.ID, Limit: 10000})
		if err != nil {
			t.Fatal(err)
		}
		var stored []string
		for _, e := range evs {
			if e.Kind == "owner.message" {
				stored = append(stored, str(payloadOf(e.Payload), "text"))
			}
		}
		if len(stored) != n {
			t.Fatalf("the store holds %d ticks, want %d", len(stored), n)
		}
		if got, want := strings.Join(printed, ","), strings.Join(stored, ","); got != want {
			t.Fatalf("printed ticks differ from the stream's order (skipped, repeated or reordered):\n got %s\nwant %s\nstderr: %s", got, want, res.errOut)
		}
		if !strings.HasSuffix(res.out, "■ done — all ticks\n") {
			t.Fatalf("no end line:\n%s", res.out)
		}
		if got := strings.Count(res.errOut, "events connection lost"); got < batches {
			t.Fatalf("%d reconnects reported, want ≥ %d:\n%s", got, batches, res.errOut)
		}
	})
}

// TestWatchInterruptLeavesMission: stopping the watch (Ctrl-C cancels its
// context) exits 130 and leaves the mission as it was.
func TestWatchInterruptLeavesMission(t *testing.T) {
	r := setupRemote(t, storetest.New(t, "sqlite"))
	m, err := r.svc.CreateMission(t.Context(), "test", mission.CreateRequest{Objective: "wait", Workspace: r.workspace("p"), Model: "claude-opus-5-5"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := &syncBuffer{}
	done := make(chan exitCode, 1)
	var errOut string
	go func() {
		var code exitCode
		_, errOut, code = runAOS(ctx, r.clientEnv(""), live, "mission", "watch", m.ID)
		done <- code
	}()
	waitFor(t, 10*time.Second, "the timeline", func() bool { return strings.Contains(live.String(), "● mission") }, live.String)
	cancel()
	select {
	case code := <-done:
		if code != exitCancelled || !strings.Contains(errOut, "the mission goes on") {
			t.Fatalf("exit %d %s", code, errOut)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop")
	}
	after, err := r.svc.GetMission(t.Context(), m.ID)
	if err != nil || after.Status != m.Status {
		t.Fatalf("mission after the interrupt: %+v %v", after, err)
	}
	runs, err := r.svc.ListRuns(t.Context(), m.ID)
	if err != nil || len(runs) != 1 || runs[0].CancelRequested {
		t.Fatalf("runs after the interrupt: %+v %v", runs, err)
	}
}
