package script

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestDelayAndChunkDelay(t *testing.T) {
	t.Parallel()
	srv := start(t, "name: slow\nturns: [{text: \"abcdefghijklmnopqrstuvwxyz0123456789\", delay: 150ms, chunk_delay: 20ms}]\n")
	t0 := time.Now()
	status, _, body := post(t, srv.URL()+"/v1/messages", `{"model":"script:slow","stream":true,"messages":[{"role":"user","content":"x"}]}`)
	d := time.Since(t0)
	events := len(parseSSE(t, body))
	// 150ms before the headers, then 20ms between each of the events.
	if min := 150*time.Millisecond + time.Duration(events-1)*20*time.Millisecond; status != 200 || d < min {
		t.Errorf("status %d after %v, want ≥ %v (%d events)", status, d, min, events)
	}
}

// TestCloseEndsStalledStreams: a stalled stream ends when the server
// closes, so that tests never hang on one.
func TestCloseEndsStalledStreams(t *testing.T) {
	t.Parallel()
	set, err := Parse([]byte("name: s\nturns: [{text: partial, stall: true}]\n"), "s")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Start(set, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/v1/messages",
		strings.NewReader(`{"model":"script:s","stream":true,"messages":[{"role":"user","content":"x"}]}`))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	buf := make([]byte, 64)
	if _, err := res.Body.Read(buf); err != nil {
		t.Fatalf("first bytes: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(res.Body)
		done <- err
	}()
	t0 := time.Now()
	_ = srv.Close()
	select {
	case <-done:
		if d := time.Since(t0); d > 2*time.Second {
			t.Errorf("stream ended %v after Close", d)
		}
	case <-ctx.Done():
		t.Fatal("stalled stream survived Close")
	}
}
