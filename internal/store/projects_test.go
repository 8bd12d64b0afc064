package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestProjectQueries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		a := store.Project{ID: "a", Name: "A", Path: "src/a", Mode: "init", CreatedAt: 1, UpdatedAt: 1}
		b := store.Project{ID: "b", Name: "B", Path: "src/b", Mode: "clone", Origin: "https://example.com/b.git", CreatedAt: 2, UpdatedAt: 2}
		for _, p := range []store.Project{b, a} {
			if err := s.InsertProject(ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		for name, p := range map[string]store.Project{
			"same id":   {ID: "a", Name: "X", Path: "other", Mode: "init"},
			"same path": {ID: "c", Name: "X", Path: "src/b", Mode: "existing"},
		} {
			if err := s.InsertProject(ctx, p); !errors.Is(err, store.ErrConflict) {
				t.Errorf("insert with %s: %v, want ErrConflict", name, err)
			}
		}
		ps, err := s.ListProjects(ctx)
		if err != nil || len(ps) != 2 || ps[0] != a || ps[1] != b {
			t.Fatalf("list = %+v, %v; want a then b", ps, err)
		}
		if err := s.RenameProject(ctx, "b", "Bee", 5); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetProject(ctx, "b")
		if err != nil || got.Name != "Bee" || got.UpdatedAt != 5 || got.Origin != b.Origin || got.CreatedAt != 2 {
			t.Fatalf("after rename: %+v, %v", got, err)
		}
		if err := s.DeleteProject(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		for what, err := range map[string]error{
			"get":    func() error { _, err := s.GetProject(ctx, "a"); return err }(),
			"rename": s.RenameProject(ctx, "a", "x", 6),
			"delete": s.DeleteProject(ctx, "a"),
		} {
			if !errors.Is(err, store.ErrNotFound) {
				t.Errorf("%s of a deleted project: %v, want ErrNotFound", what, err)
			}
		}
		// The path is free again once unregistered.
		if err := s.InsertProject(ctx, store.Project{ID: "c", Name: "C", Path: "src/a", Mode: "existing"}); err != nil {
			t.Fatalf("reuse a freed path: %v", err)
		}
	})
}

func TestNotificationQueries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		seedRun(t, s, "root", 1)
		if err := s.InsertRun(ctx, store.Run{ID: "child", MissionID: "m-root", ParentRunID: "root", Logic: "l", Status: "queued", CreatedAt: 2, UpdatedAt: 2}); err != nil {
			t.Fatal(err)
		}
		ev := func(run, kind string) int64 {
			t.Helper()
			if _, err := s.InsertEvent(ctx, store.Event{MissionID: "m-root", RunID: run, Kind: kind, Payload: json.RawMessage(`{"k":"` + kind + `"}`), CreatedAt: 3}); err != nil {
				t.Fatal(err)
			}
			id, err := s.LatestEventID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		w1 := ev("root", "wait.created")
		ev("root", "model.delta")
		ev("child", "run.completed") // a child run's end is not the mission's
		w2 := ev("child", "wait.created")
		done := ev("root", "run.completed")
		list := func(unread bool) []store.Notification {
			t.Helper()
			ns, err := s.ListNotifications(ctx, store.ListNotificationsParams{UnreadOnly: unread, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			return ns
		}
		ids := func(ns []store.Notification) (out []int64) {
			for _, n := range ns {
				out = append(out, n.ID)
			}
			return out
		}
		all := list(false)
		if got := ids(all); len(got) != 3 || got[0] != done || got[1] != w2 || got[2] != w1 {
			t.Fatalf("notifications %v, want [%d %d %d] (newest first)", got, done, w2, w1)
		}
		if all[0].Kind != "run.completed" || all[0].Read || string(all[0].Payload) != `{"k":"run.completed"}` || all[0].RunID != "root" {
			t.Fatalf("newest = %+v", all[0])
		}
		if ns, _ := s.ListNotifications(ctx, store.ListNotificationsParams{Limit: 1}); len(ns) != 1 || ns[0].ID != done {
			t.Fatalf("limit 1: %+v", ns)
		}
		// Marking: unknown and non-notification ids are ignored, a second
		// mark counts nothing.
		n, err := s.MarkNotificationsRead(ctx, []int64{w1, w1 + 1, 999999}, 10)
		if err != nil || n != 1 {
			t.Fatalf("mark w1 = %d, %v; want 1", n, err)
		}
		if n, _ := s.MarkNotificationsRead(ctx, []int64{w1}, 11); n != 0 {
			t.Fatalf("mark w1 again = %d, want 0", n)
		}
		if got := ids(list(true)); len(got) != 2 || got[0] != done || got[1] != w2 {
			t.Fatalf("unread after marking w1: %v", got)
		}
		n, err = s.MarkAllNotificationsRead(ctx, 12)
		if err != nil || n != 2 {
			t.Fatalf("mark all = %d, %v; want 2", n, err)
		}
		if got := list(true); len(got) != 0 {
			t.Fatalf("unread after mark all: %v", ids(got))
		}
		if n, _ := s.MarkAllNotificationsRead(ctx, 13); n != 0 {
			t.Fatalf("mark all again = %d, want 0", n)
		}
		// A later event is unread again, whatever the marker said.
		w3 := ev("root", "wait.created")
		if got := ids(list(true)); len(got) != 1 || got[0] != w3 {
			t.Fatalf("unread after a new wait: %v, want [%d]", got, w3)
		}
		if all := list(false); len(all) != 4 || !all[1].Read || !all[3].Read {
			t.Fatalf("read flags: %+v", all)
		}
	})
}
