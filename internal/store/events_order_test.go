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
	t.Parallel()
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
		// Several readers at once: on PostgreSQL each read also runs the
		// sequencer, so sequencers race too.
		const readers = 3
		seen := make([]map[string]int, readers)
		cursors := make([]int64, readers)
		var rwg sync.WaitGroup
		for r := 0; r < readers; r++ {
			seen[r] = map[string]int{}
			rwg.Add(1)
			go func() {
				defer rwg.Done()
				read := func() int {
					evs, err := s.ListEvents(ctx, store.ListEventsParams{After: cursors[r], MissionID: "m", Limit: 7})
					if err != nil {
						t.Error(err)
						return 0
					}
					for _, e := range evs {
						if e.ID <= cursors[r] {
							t.Errorf("reader %d: position %d after cursor %d", r, e.ID, cursors[r])
						}
						cursors[r] = e.ID
						seen[r][string(e.Payload)]++
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
				// After the writers: another reader may be assigning the last
				// positions right now (then this one's try-lock fails and
				// its read finds nothing yet), so drain until all are seen
				// or a deadline passes.
				deadline := time.Now().Add(10 * time.Second)
				for len(seen[r]) < writers*each && time.Now().Before(deadline) {
					if read() == 0 {
						time.Sleep(5 * time.Millisecond)
					}
				}
			}()
		}
		rwg.Wait()
		for r := 0; r < readers; r++ {
			if len(seen[r]) != writers*each {
				t.Fatalf("reader %d saw %d distinct events, want %d: a cursor skipped some", r, len(seen[r]), writers*each)
			}
			for k, n := range seen[r] {
				if n != 1 {
					t.Errorf("reader %d saw event %s %d times", r, k, n)
				}
			}
		}
		latest, err := s.LatestEventID(ctx)
		if err != nil || latest != cursors[0] {
			t.Errorf("LatestEventID = %d (%v), want the last position %d", latest, err, cursors[0])
		}
	})
}
