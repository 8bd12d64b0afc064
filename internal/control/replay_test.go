package control_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/control"
	"github.com/aos-run/aos/internal/mission"
)

// collector follows the stream in the background.
type collector struct {
	mu     sync.Mutex
	snap   *control.Marker
	seqs   []uint64
	events []control.Event
	err    error
	done   chan struct{}
	cancel context.CancelFunc
}

func follow(t *testing.T, c *control.Client, cursor *control.Marker) *collector {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	col := &collector{done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(col.done)
		err := c.Subscribe(ctx, "", cursor, func(m control.Marker) error {
			col.mu.Lock()
			col.snap = &m
			col.mu.Unlock()
			return nil
		}, func(seq uint64, e control.Event) error {
			col.mu.Lock()
			col.seqs = append(col.seqs, seq)
			col.events = append(col.events, e)
			col.mu.Unlock()
			return nil
		})
		col.mu.Lock()
		col.err = err
		col.mu.Unlock()
	}()
	t.Cleanup(col.stop)
	return col
}

func (c *collector) stop() { c.cancel(); <-c.done }

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *fixture) create(t *testing.T, n int) {
	t.Helper()
	for range n {
		if _, err := f.svc.CreateMission(context.Background(), "test", mission.CreateRequest{Objective: "x", Workspace: "plain", Model: "claude-opus-5-5"}); err != nil {
			t.Fatal(err)
		}
	}
}

// journal is every persisted event after id.
func (f *fixture) journal(t *testing.T, after int64) []mission.Event {
	t.Helper()
	es, err := f.svc.ReplayEvents(context.Background(), after, "", 10000)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func (f *fixture) snapshot(t *testing.T) control.Marker {
	t.Helper()
	var st control.RuntimeStatus
	if err := f.client.Call(context.Background(), control.OpRuntimeStatus, "", nil, &st); err != nil {
		t.Fatal(err)
	}
	return st.Snapshot
}

// TestReplayAfterReconnect: events carry contiguous sequences; a client
// that reconnects with its cursor gets exactly the events it missed.
func TestReplayAfterReconnect(t *testing.T) {
	t.Parallel()
	f := setup(t, 1000)
	col := follow(t, f.client, nil)
	waitFor(t, "the snapshot marker", func() bool { col.mu.Lock(); defer col.mu.Unlock(); return col.snap != nil })
	start := *col.snap
	f.create(t, 2)
	want := f.journal(t, start.JournalEventID)
	waitFor(t, "the live events", func() bool { col.mu.Lock(); defer col.mu.Unlock(); return len(col.events) == len(want) })
	col.stop()
	cursor := control.Marker{DaemonID: start.DaemonID, EventSequence: col.seqs[len(col.seqs)-1]}

	f.create(t, 2) // while disconnected
	all := f.journal(t, start.JournalEventID)
	waitFor(t, "the daemon to number them", func() bool { return f.snapshot(t).JournalEventID == all[len(all)-1].ID })
	col2 := follow(t, f.client, &cursor)
	f.create(t, 1) // and live again
	all = f.journal(t, start.JournalEventID)
	waitFor(t, "the replay", func() bool {
		col2.mu.Lock()
		defer col2.mu.Unlock()
		return len(col.events)+len(col2.events) >= len(all)
	})
	col2.stop()
	got := append(append([]control.Event{}, col.events...), col2.events...)
	seqs := append(append([]uint64{}, col.seqs...), col2.seqs...)
	if len(got) != len(all) {
		t.Fatalf("got %d events, journal has %d", len(got), len(all))
	}
	for i := range got {
		if got[i].Revision != all[i].ID || got[i].Type != all[i].Kind || seqs[i] != start.EventSequence+uint64(i)+1 {
			t.Fatalf("event %d: seq %d %s #%d, want seq %d %s #%d", i, seqs[i], got[i].Type, got[i].Revision, start.EventSequence+uint64(i)+1, all[i].Kind, all[i].ID)
		}
	}
}

// TestReplayUnavailable: a cursor of another daemon identity, past the
// last sequence, or before the retention floor is replay_unavailable with
// snapshot_required and the current marker; the snapshot recovers every
// state change from the journal, and the marker resumes the stream.
func TestReplayUnavailable(t *testing.T) {
	t.Parallel()
	f := setup(t, 2)
	ctx := context.Background()
	m0 := f.snapshot(t)
	f.create(t, 3)
	all := f.journal(t, m0.JournalEventID)
	if len(all) <= 2 {
		t.Fatalf("want more events than the retention of 2, got %d", len(all))
	}
	waitFor(t, "the daemon to number them", func() bool { return f.snapshot(t).JournalEventID == all[len(all)-1].ID })
	cur := f.snapshot(t)

	cases := map[string]control.Marker{
		"predates retention": m0,
		"another daemon":     {DaemonID: "d_other", EventSequence: cur.EventSequence},
		"past the last":      {DaemonID: cur.DaemonID, EventSequence: cur.EventSequence + 5},
	}
	for name, cursor := range cases {
		err := f.client.Subscribe(ctx, "", &cursor, func(control.Marker) error { return errors.New("accepted") }, nil)
		var ce *control.Error
		if !errors.As(err, &ce) || ce.Code != control.CodeReplayUnavailable || ce.Recovery == nil || !ce.Recovery.SnapshotRequired ||
			ce.Recovery.Snapshot == nil || *ce.Recovery.Snapshot != cur {
			t.Fatalf("%s: %v (%+v)", name, err, ce)
		}
	}
	// A cursor inside retention still replays.
	inside := control.Marker{DaemonID: cur.DaemonID, EventSequence: cur.EventSequence - 1}
	col := follow(t, f.client, &inside)
	waitFor(t, "the retained event", func() bool { col.mu.Lock(); defer col.mu.Unlock(); return len(col.events) == 1 })
	col.stop()

	// Snapshot recovery: the journal from the client's last known journal
	// id to the marker, then the stream from the marker.
	var recovered []mission.Event
	for after := m0.JournalEventID; after < cur.JournalEventID; {
		var page []mission.Event
		for _, m := range f.missions(t) {
			var es []mission.Event
			if err := f.client.Call(ctx, control.OpMissionEvents, "", control.MissionEventsArgs{MissionID: m.ID, After: after}, &es); err != nil {
				t.Fatal(err)
			}
			page = append(page, es...)
		}
		recovered = append(recovered, page...)
		after = cur.JournalEventID
	}
	if len(recovered) != len(all) {
		t.Fatalf("snapshot recovered %d events, the journal has %d", len(recovered), len(all))
	}
	resumed := follow(t, f.client, &cur)
	f.create(t, 1)
	more := f.journal(t, cur.JournalEventID)
	waitFor(t, "events after the marker", func() bool { resumed.mu.Lock(); defer resumed.mu.Unlock(); return len(resumed.events) == len(more) })
	if resumed.seqs[0] != cur.EventSequence+1 {
		t.Fatalf("resumed at %d, want %d", resumed.seqs[0], cur.EventSequence+1)
	}

	// A restarted daemon is another identity: the old cursor cannot replay.
	f.start(t, 2)
	err := f.client.Subscribe(ctx, "", &cur, func(control.Marker) error { return errors.New("accepted") }, nil)
	if !errors.Is(err, &control.Error{Code: control.CodeReplayUnavailable}) {
		t.Fatalf("cursor of the previous daemon: %v", err)
	}
}
