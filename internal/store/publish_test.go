package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storeopen"
	"github.com/aos-run/aos/internal/store/storetest"
)

// reopen opens a second, separate Store on db's database, as another
// process would.
func reopen(t *testing.T, db storetest.DB) store.Store {
	t.Helper()
	s, err := storeopen.Open(context.Background(), db.DSN)
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// receive reads n payloads from ch, failing after d.
func receive(t *testing.T, ch <-chan []byte, n int, d time.Duration) [][]byte {
	t.Helper()
	var got [][]byte
	timeout := time.After(d)
	for len(got) < n {
		select {
		case p, ok := <-ch:
			if !ok {
				t.Fatalf("subscription closed after %d of %d payloads", len(got), n)
			}
			got = append(got, p)
		case <-timeout:
			t.Fatalf("received %d of %d payloads in %s", len(got), n, d)
		}
	}
	return got
}

// busDrops returns how many payloads s dropped for a receiver whose queue
// stayed full: SQLite's datagram bus counts them (docs/KERNEL.md,
// Transient events); PostgreSQL's NOTIFY queues them all.
func busDrops(t *testing.T, db storetest.DB, s store.Store) int64 {
	t.Helper()
	b, ok := s.(interface {
		BusStats() (dropped, staleRemoved int64)
	})
	if !ok {
		if db.Driver == "sqlite" {
			t.Fatalf("%T has no BusStats", s)
		}
		return 0
	}
	dropped, _ := b.BusStats()
	return dropped
}

// TestPublishReachesSubscribersOfEveryInstance: payloads published through
// one Store reach a subscriber of another instance of the same database,
// and of the same instance, every one in publish order; the largest
// payload passes and a larger one is refused with ErrTooLarge.
//
// Payloads go in bursts that a receiver's queue holds even if its reader
// does not run meanwhile (net.unix.max_dgram_qlen is often 10), each
// received before the next: SQLite's bus drops a payload for a queue that
// stays full for about 5 ms, by design (a lost wake-up is made up by the
// worker's poll, and transient events are live-only), and a reader held
// up that long on a loaded machine is not what this test is about.
func TestPublishReachesSubscribersOfEveryInstance(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		a, b := db.Store, reopen(t, db)
		subB, err := b.Subscribe(ctx, store.ChannelEvents)
		if err != nil {
			t.Fatal(err)
		}
		subA, err := a.Subscribe(ctx, store.ChannelEvents)
		if err != nil {
			t.Fatal(err)
		}
		subs := map[string]<-chan []byte{"other instance": subB, "same instance": subA}
		// publish sends a burst and checks that each subscriber receives
		// it, in order.
		publish := func(burst ...[]byte) {
			t.Helper()
			for _, p := range burst {
				if err := a.Publish(ctx, store.ChannelEvents, p); err != nil {
					t.Fatalf("publish of %d bytes: %v", len(p), err)
				}
			}
			// Publish drops before it returns: a drop shows here, named,
			// rather than as a payload that never arrives.
			if d := busDrops(t, db, a); d != 0 {
				t.Fatalf("the bus dropped %d payloads (a receiver's queue stayed full) in bursts of %d", d, len(burst))
			}
			for name, sub := range subs {
				for i, p := range receive(t, sub, len(burst), 10*time.Second) {
					if !bytes.Equal(p, burst[i]) {
						t.Fatalf("%s: payload %d of a burst is %d bytes %.10q, want %d bytes %.10q", name, i, len(p), p, len(burst[i]), burst[i])
					}
				}
			}
		}
		const n, burst = 100, 8
		for i := 0; i < n; i += burst {
			var ps [][]byte
			for j := i; j < min(i+burst, n); j++ {
				ps = append(ps, fmt.Appendf(nil, "p%03d", j))
			}
			publish(ps...)
		}
		big := bytes.Repeat([]byte("x"), a.MaxPayload())
		publish(big)
		if err := a.Publish(ctx, store.ChannelEvents, append(big, 'x')); !errors.Is(err, store.ErrTooLarge) {
			t.Fatalf("publish of MaxPayload+1 bytes: %v, want ErrTooLarge", err)
		}
	})
}

// TestSubscribeRefusesUnknownChannelsAndEndsWithContext: an unknown channel
// is an error on both sides; a subscription's channel closes when its ctx
// ends.
func TestSubscribeRefusesUnknownChannelsAndEndsWithContext(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if _, err := db.Store.Subscribe(ctx, "no_such_channel"); err == nil {
			t.Error("subscribe to an unknown channel succeeded")
		}
		if err := db.Store.Publish(ctx, "no_such_channel", []byte("x")); err == nil {
			t.Error("publish on an unknown channel succeeded")
		}
		sub, err := db.Store.Subscribe(ctx, store.ChannelEvents)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		select {
		case _, ok := <-sub:
			for ok {
				_, ok = <-sub
			}
		case <-time.After(5 * time.Second):
			t.Fatal("subscription still open 5 s after its context ended")
		}
	})
}
