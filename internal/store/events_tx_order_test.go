package store_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// insertEvents commits events with payloads from..to-1 in one transaction.
func insertEvents(t *testing.T, s store.Store, from, to int) {
	t.Helper()
	ctx := context.Background()
	err := s.Tx(ctx, func(q store.Queries) error {
		for i := from; i < to; i++ {
			if _, err := q.InsertEvent(ctx, store.Event{MissionID: "m", RunID: "r", Kind: "k", Payload: []byte(strconv.Itoa(i)), CreatedAt: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readInOrder follows the cursor from after and checks that the payloads
// count up from want; it returns the last position and the next payload.
func readInOrder(t *testing.T, s store.Store, after int64, want int) (int64, int) {
	t.Helper()
	for {
		evs, err := s.ListEvents(context.Background(), store.ListEventsParams{After: after, Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return after, want
		}
		for _, e := range evs {
			if got := string(e.Payload); got != strconv.Itoa(want) {
				t.Fatalf("event at position %d is %s, want %d: events were reordered", e.ID, got, want)
			}
			if e.ID <= after {
				t.Fatalf("position %d after %d", e.ID, after)
			}
			after = e.ID
			want++
		}
	}
}

// TestEventsKeepInsertOrder: events that become visible together are read
// in the order they were inserted. On PostgreSQL positions are assigned
// after commit, in one statement; the plan may visit the unpositioned rows
// in heap order, which after a VACUUM puts newer rows first (they reuse
// freed pages), so the positions must be drawn in id order explicitly, or
// a reader could see run.completed before the run's last event.
func TestEventsKeepInsertOrder(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		s := db.Store
		insertEvents(t, s, 0, 10000)
		pos, next := readInOrder(t, s, 0, 0) // positions them: 10,000 dead row versions
		insertEvents(t, s, 10000, 10300)     // at the end of the heap
		if db.Driver == "postgres" {
			conn, err := pgx.Connect(context.Background(), db.DSN)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(context.Background(), "VACUUM events"); err != nil {
				t.Fatal(err)
			}
		}
		insertEvents(t, s, 10300, 10600) // into the freed pages, before the previous ones
		if db.Driver == "postgres" {
			conn, err := pgx.Connect(context.Background(), db.DSN)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(context.Background(), "ANALYZE events"); err != nil {
				t.Fatal(err)
			}
		}
		if _, n := readInOrder(t, s, pos, next); n != 10600 {
			t.Fatalf("read up to %d, want 10600", n)
		}
	})
}
