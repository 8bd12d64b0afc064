package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/client"
)

// TestFollowBacksOffFromAServerThatClosesAtOnce: a server that accepts
// the events socket and closes it before any frame is an outage like a
// refused dial: the backoff grows and Follow gives up after MaxOutage,
// instead of redialling every 100 ms forever.
func TestFollowBacksOffFromAServerThatClosesAtOnce(t *testing.T) {
	var dials atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dials.Add(1)
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		_ = c.Close(websocket.StatusTryAgainLater, "replay failed")
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "aos_test", client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- c.Follow(ctx, client.FollowOptions{MaxOutage: time.Second, MinBackoff: 50 * time.Millisecond, MaxBackoff: 400 * time.Millisecond})
	}()
	select {
	case err := <-done:
		if err == nil || ctx.Err() != nil {
			t.Fatalf("Follow = %v (ctx %v), want the stream's error after the outage", err, ctx.Err())
		}
	case <-ctx.Done():
		t.Fatalf("Follow still redialling after 20 s (%d dials)", dials.Load())
	}
	// 50+100+200+400+400… ms: about 6 dials fit in the 1 s outage.
	if n := dials.Load(); n < 2 || n > 12 {
		t.Fatalf("%d dials, want a backing-off handful", n)
	}
}

// TestCallerDeadlineIsNotUnreachable: when the caller's own context ends
// first, the error says so (exit code of an interrupted command), not that
// the server was unreachable (exit 5).
func TestCallerDeadlineIsNotUnreachable(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	c, err := client.New(srv.URL, "aos_test", client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = c.Status(ctx)
	var ue *client.UnreachableError
	if !errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ue) {
		t.Fatalf("err = %v, want the caller's deadline, not unreachable", err)
	}
}
