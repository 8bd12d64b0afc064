package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storeopen"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestDoorbellAcrossInstances: a Publish on the work channel through one
// store instance rings the Doorbell of another instance of the same
// database (another process, in production): NOTIFY on PostgreSQL, the
// unix datagram bus on SQLite. Without it an idle worker on SQLite would
// claim a mission created by the server only at its next poll.
func TestDoorbellAcrossInstances(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		other, err := storeopen.Open(ctx, db.DSN)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = other.Close() })
		bell, err := other.Doorbell(ctx, store.ChannelWork)
		if err != nil {
			t.Fatal(err)
		}
		// Publish until it rings: on PostgreSQL LISTEN may not be in place
		// the instant Doorbell returns.
		deadline := time.After(10 * time.Second)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			if err := db.Store.Publish(ctx, store.ChannelWork, nil); err != nil {
				t.Fatalf("publish: %v", err)
			}
			select {
			case _, ok := <-bell:
				if !ok {
					t.Fatal("the bell closed while ctx is live")
				}
				break wait
			case <-tick.C:
			case <-deadline:
				t.Fatal("the doorbell of the other instance never rang")
			}
		}
		cancel()
		select {
		case _, ok := <-bell:
			for ok {
				_, ok = <-bell
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the bell stayed open after ctx ended")
		}
	})
}
