package mission_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// history writes, through the store, a mission as a run leaves it: its
// mission row, a root run (and optionally a child run still going), two
// steps, three events and an audit record.
type history struct {
	id, run string
	events  []int64
}

func writeHistory(t *testing.T, st store.Store, name string, created, ended int64, liveChild bool) history {
	t.Helper()
	ctx := context.Background()
	h := history{id: "m-" + name, run: "r-" + name}
	status := "done"
	if ended == 0 {
		status = "running"
	}
	err := st.Tx(ctx, func(q store.Queries) error {
		if err := q.InsertMission(ctx, store.Mission{ID: h.id, Title: name, Spec: []byte(`{}`), Status: status, RootRunID: h.run,
			CreatedAt: created, UpdatedAt: created, EndedAt: ended}); err != nil {
			return err
		}
		if err := q.InsertRun(ctx, store.Run{ID: h.run, MissionID: h.id, Logic: "l", Input: []byte(`{}`), Status: status,
			CreatedAt: created, UpdatedAt: created, EndedAt: ended}); err != nil {
			return err
		}
		if liveChild {
			if err := q.InsertRun(ctx, store.Run{ID: h.run + "-child", MissionID: h.id, ParentRunID: h.run, Logic: "l", Input: []byte(`{}`),
				Status: "running", CreatedAt: created, UpdatedAt: created}); err != nil {
				return err
			}
		}
		for seq := range 2 {
			if err := q.InsertStep(ctx, store.Step{RunID: h.run, Seq: seq, Kind: "tool_call", Name: "read_file", Effect: "read",
				RequestHash: "h", IdemKey: fmt.Sprintf("%s-%d", h.run, seq), Request: []byte(`{}`), Status: "completed",
				Result: []byte(`{"ok":true}`), StartedAt: created, EndedAt: created}); err != nil {
				return err
			}
		}
		if _, err := q.InsertAudit(ctx, store.AuditRecord{At: created, Actor: "owner", Action: "mission.create", Target: h.id, Detail: []byte(`{}`)}); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // each in its own commit, as a run writes them
		if _, err := st.InsertEvent(ctx, store.Event{MissionID: h.id, RunID: h.run, Kind: "model.text", Payload: []byte(fmt.Sprintf(`{"i":%d}`, i)),
			Trust: "trusted", CreatedAt: created}); err != nil {
			t.Fatal(err)
		}
	}
	// Their cursor positions, as a reader sees them.
	es, err := st.ListEvents(ctx, store.ListEventsParams{MissionID: h.id, Limit: 10})
	if err != nil || len(es) != 3 {
		t.Fatalf("%s: %d events, %v", h.id, len(es), err)
	}
	for _, e := range es {
		h.events = append(h.events, e.ID)
	}
	return h
}

func eventsOf(t *testing.T, svc *mission.Service, missionID string, after int64) ([]mission.Event, error) {
	t.Helper()
	return svc.ReplayEvents(context.Background(), after, missionID, 10000)
}

// TestRetentionPrunesOnlyLongEndedHistory: with retention at 30 days,
// PruneHistory removes the events and audit records of a mission ended 40
// days ago and nothing else: its mission row, run and steps stay; a
// mission ended yesterday, a live one and one ended 40 days ago whose
// child run still runs keep everything. A replay from a cursor before
// the pruned events gets a typed cursor_expired error naming where to
// resume, never a silent gap; a replay from that point, or of a mission
// that was not pruned, is complete.
func TestRetentionPrunesOnlyLongEndedHistory(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx := context.Background()
		now := time.Now()
		day := int64(24 * time.Hour / time.Millisecond)
		ms := now.UnixMilli()
		svc := mission.New(kernel.New(db.Store, kernel.Options{}), mission.Options{WorkspaceRoot: t.TempDir(), Now: func() time.Time { return now }})
		old := writeHistory(t, db.Store, "old", ms-45*day, ms-40*day, false)
		recent := writeHistory(t, db.Store, "recent", ms-2*day, ms-1*day, false)
		live := writeHistory(t, db.Store, "live", ms-50*day, 0, false)
		oldBusy := writeHistory(t, db.Store, "oldbusy", ms-45*day, ms-40*day, true)

		// Nothing is pruned until a setting says so.
		if r, err := svc.PruneHistory(ctx); err != nil || r.Missions != 0 {
			t.Fatalf("without settings: %+v, %v", r, err)
		}
		thirty := 30
		if _, err := svc.PutSettings(ctx, "owner", mission.Settings{RetentionEventsDays: &thirty, RetentionAuditDays: &thirty}); err != nil {
			t.Fatal(err)
		}
		bad := -1
		if _, err := svc.PutSettings(ctx, "owner", mission.Settings{RetentionEventsDays: &bad}); !errors.Is(err, mission.ErrInvalidInput) {
			t.Fatalf("a negative retention: %v, want invalid input", err)
		}
		// A reader that is live at the tip before the prune.
		tip, err := svc.LatestEventID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r, err := svc.PruneHistory(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Missions != 1 || r.Events != 3 || r.Audit != 1 {
			t.Fatalf("pruned %+v, want 1 mission, 3 events, 1 audit record", r)
		}
		if r, err := svc.PruneHistory(ctx); err != nil || r.Missions != 0 {
			t.Fatalf("a second pass pruned %+v, %v; want nothing", r, err)
		}

		// The outcome and the journal of the pruned mission stay.
		if m, err := db.Store.GetMission(ctx, old.id); err != nil || m.Status != "done" {
			t.Fatalf("pruned mission: %+v, %v", m, err)
		}
		if steps, err := db.Store.ListSteps(ctx, old.run, -1, 100); err != nil || len(steps) != 2 {
			t.Fatalf("pruned mission's steps: %d, %v; want 2", len(steps), err)
		}
		audit, err := db.Store.ListAudit(ctx, store.ListAuditParams{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		left := map[string]bool{}
		for _, a := range audit {
			left[a.Target] = true
		}
		if left[old.id] || !left[recent.id] || !left[live.id] || !left[oldBusy.id] {
			t.Fatalf("audit targets left %v: want all but %s", left, old.id)
		}

		// Missions that were not pruned replay completely from 0.
		for _, h := range []history{recent, live, oldBusy} {
			es, err := eventsOf(t, svc, h.id, 0)
			if err != nil || len(es) != 3 {
				t.Fatalf("%s: %d events, %v; want 3", h.id, len(es), err)
			}
		}
		// The pruned one, and the all-missions stream, from before the
		// pruned range: typed, with where to resume.
		for _, c := range []struct {
			mission string
			cursor  int64
		}{{old.id, 0}, {old.id, old.events[1]}, {"", 0}, {"", old.events[2] - 1}} {
			_, err := eventsOf(t, svc, c.mission, c.cursor)
			var exp *mission.CursorExpiredError
			if !errors.Is(err, mission.ErrCursorExpired) || !errors.As(err, &exp) {
				t.Fatalf("replay of %q from %d: %v; want cursor_expired", c.mission, c.cursor, err)
			}
			if exp.Through != old.events[2] || exp.LatestID < tip {
				t.Fatalf("replay of %q from %d: %+v; want through %d, latest ≥ %d", c.mission, c.cursor, exp, old.events[2], tip)
			}
		}
		// From the resume point (and for a reader that was at the tip),
		// every event that was not pruned is there.
		es, err := eventsOf(t, svc, "", old.events[2])
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]int{}
		for _, e := range es {
			want[e.MissionID]++
		}
		if want[recent.id] != 3 || want[live.id] != 3 || want[oldBusy.id] != 3 || want[old.id] != 0 {
			t.Fatalf("events after the pruned range by mission: %v", want)
		}
		if _, err := eventsOf(t, svc, "", tip); err != nil {
			t.Fatalf("a reader at the tip: %v", err)
		}
		// A live mission's new events after the prune reach its readers.
		if _, err := db.Store.InsertEvent(ctx, store.Event{MissionID: live.id, RunID: live.run, Kind: "model.text", Payload: []byte(`{}`), Trust: "trusted", CreatedAt: ms}); err != nil {
			t.Fatal(err)
		}
		if es, err := eventsOf(t, svc, live.id, live.events[2]); err != nil || len(es) != 1 {
			t.Fatalf("live mission after the prune: %d events, %v; want 1", len(es), err)
		}
	})
}
