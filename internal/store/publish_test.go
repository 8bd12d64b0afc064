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

// TestPublishReachesSubscribersOfEveryInstance: payloads published through
// one Store reach a subscriber of another instance of the same database,
// and of the same instance, every one in publish order; the largest
// payload passes and a larger one is refused with ErrTooLarge.
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
		const n = 100
		for i := range n {
			if err := a.Publish(ctx, store.ChannelEvents, fmt.Appendf(nil, "p%03d", i)); err != nil {
				t.Fatal(err)
			}
		}
		big := bytes.Repeat([]byte("x"), a.MaxPayload())
		if err := a.Publish(ctx, store.ChannelEvents, big); err != nil {
			t.Fatalf("publish of MaxPayload (%d) bytes: %v", len(big), err)
		}
		if err := a.Publish(ctx, store.ChannelEvents, append(big, 'x')); !errors.Is(err, store.ErrTooLarge) {
			t.Fatalf("publish of MaxPayload+1 bytes: %v, want ErrTooLarge", err)
		}
		for name, sub := range map[string]<-chan []byte{"other instance": subB, "same instance": subA} {
			got := receive(t, sub, n+1, 10*time.Second)
			for i := range n {
				if want := fmt.Sprintf("p%03d", i); string(got[i]) != want {
					t.Fatalf("%s: payload %d = %q, want %q", name, i, got[i], want)
				}
			}
			if !bytes.Equal(got[n], big) {
				t.Errorf("%s: the largest payload arrived as %d bytes", name, len(got[n]))
			}
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
