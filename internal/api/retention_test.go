package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestEventsCursorBeforePrunedRange: after retention pruned the events
// of a mission ended 40 days ago, a client whose cursor is before them
// gets, instead of a replay with a silent hole, a system.notice
// "cursor.expired" naming latestId, and then live events; a client whose
// cursor is past them replays as before.
func TestEventsCursorBeforePrunedRange(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		ctx := context.Background()
		old := time.Now().Add(-40 * 24 * time.Hour).UnixMilli()
		if err := b.st.InsertMission(ctx, store.Mission{ID: "m-old", Title: "old", Spec: []byte(`{}`), Status: "done", RootRunID: "r-old",
			CreatedAt: old, UpdatedAt: old, EndedAt: old}); err != nil {
			t.Fatal(err)
		}
		if err := b.st.InsertRun(ctx, store.Run{ID: "r-old", MissionID: "m-old", Logic: "l", Input: []byte(`{}`), Status: "done",
			CreatedAt: old, UpdatedAt: old, EndedAt: old}); err != nil {
			t.Fatal(err)
		}
		b.emit("m-old", 3, 10)
		live := b.createMission()
		b.emit(live.ID, 2, 10)
		pruned := b.eventIDs("m-old")
		b.ok("PUT", "/settings", map[string]any{"retentionEventsDays": 30}, nil)
		if r, err := b.svc.PruneHistory(ctx); err != nil || r.Events != 3 {
			t.Fatalf("prune: %+v, %v; want 3 events", r, err)
		}
		latest, err := b.st.LatestEventID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"?cursor=0&missionId=m-old", "?cursor=0", fmt.Sprintf("?cursor=%d", pruned[0])} {
			c := b.dial(ctx, q)
			e := b.next(ctx, c)
			var n api.Notice
			_ = json.Unmarshal(e.Payload, &n)
			if e.Kind != "system.notice" || n.Code != api.NoticeCursorExpired || n.LatestID != latest {
				t.Fatalf("%s: first frame %s %s; want system.notice %s with latestId %d", q, e.Kind, e.Payload, api.NoticeCursorExpired, latest)
			}
			_ = c.CloseNow()
		}
		// Live events follow the notice.
		c := b.dial(ctx, "?cursor=0")
		if e := b.next(ctx, c); e.Kind != "system.notice" {
			t.Fatalf("first frame %+v, want the notice", e)
		}
		b.emit(live.ID, 1, 10)
		if e := b.next(ctx, c); e.Kind != "test.tick" || e.MissionID != live.ID || e.ID <= latest {
			t.Fatalf("after the notice: %+v; want the live mission's new event", e)
		}
		// Past the pruned range: a plain replay of what is left.
		c = b.dial(ctx, fmt.Sprintf("?cursor=%d&missionId=%s", 0, live.ID))
		for range 3 {
			if e := b.next(ctx, c); e.Kind == "system.notice" || e.MissionID != live.ID {
				t.Fatalf("replay of a mission that was not pruned: %+v", e)
			}
		}
	})
}
