package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestEventCursorNeverSkipsAnEvent: writers commit events concurrently and
// out of insert order (each sleeps inside its transaction); a reader that
// follows a cursor must still see every event exactly once, in increasing
// positions. On PostgreSQL, row ids alone would fail this: a slow
// transaction commits a lower id after the reader has passed it.
func TestEventCursorNeverSkipsAnEvent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		const writers, each = 6, 25
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), 7))
				for i := 0; i < each; i++ {
					err := s.Tx(ctx, func(q store.Queries) error {
						if _, err := q.InsertEvent(ctx, store.Event{MissionID: "m", RunID: "r", Kind: "k", Payload: []byte(fmt.Sprintf(`"%d-%d"`, w, i)), CreatedAt: 1}); err != nil {
							return err
						}
						time.Sleep(time.Duration(r.IntN(3000)) * time.Microsecond) // commit later than others that inserted after us
						return nil
					})
					if err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		seen := map[string]int{}
		var cursor int64
		read := func() int {
			evs, err := s.ListEvents(ctx, store.ListEventsParams{After: cursor, MissionID: "m", Limit: 7})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.ID <= cursor {
					t.Fatalf("position %d after cursor %d", e.ID, cursor)
				}
				cursor = e.ID
				seen[string(e.Payload)]++
			}
			return len(evs)
		}
		for running := true; running; {
			select {
			case <-done:
				running = false
			default:
				read()
			}
		}
		for read() > 0 {
		}
		if len(seen) != writers*each {
			t.Fatalf("reader saw %d distinct events, want %d: a cursor skipped some", len(seen), writers*each)
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("event %s seen %d times", k, n)
			}
		}
		latest, err := s.LatestEventID(ctx)
		if err != nil || latest != cursor {
			t.Errorf("LatestEventID = %d (%v), want the last position %d", latest, err, cursor)
		}
	})
}
