package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// dial opens the events socket with the write token in the header.
func (b *bundle) dial(ctx context.Context, query string) *websocket.Conn {
	b.t.Helper()
	c, resp, err := websocket.Dial(ctx, b.wsURL(query), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + b.read}}})
	if err != nil {
		b.t.Fatalf("dial %s: %v (%v)", query, err, resp)
	}
	c.SetReadLimit(1 << 20)
	b.t.Cleanup(func() { _ = c.CloseNow() })
	return c
}

func (b *bundle) wsURL(query string) string {
	return "ws" + strings.TrimPrefix(b.srv.URL, "http") + api.Prefix + "/events" + query
}

// next reads one event frame.
func (b *bundle) next(ctx context.Context, c *websocket.Conn) mission.Event {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, data, err := c.Read(ctx)
	if err != nil {
		b.t.Fatalf("read event: %v", err)
	}
	b.record(data)
	var e mission.Event
	if err := json.Unmarshal(data, &e); err != nil {
		b.t.Fatalf("decode event %s: %v", data, err)
	}
	return e
}

// emit inserts n events for a mission in one transaction, with payloads of
// size bytes.
func (b *bundle) emit(missionID string, n, size int) {
	b.t.Helper()
	ctx := context.Background()
	pad := strings.Repeat("x", size)
	err := b.st.Tx(ctx, func(q store.Queries) error {
		for i := 0; i < n; i++ {
			p, _ := json.Marshal(map[string]any{"i": i, "pad": pad})
			if _, err := q.InsertEvent(ctx, store.Event{MissionID: missionID, RunID: "r", Kind: "test.tick", Payload: p, CreatedAt: 1}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.t.Fatal(err)
	}
}

func (b *bundle) eventIDs(missionID string) []int64 {
	b.t.Helper()
	es, err := b.st.ListEvents(context.Background(), store.ListEventsParams{MissionID: missionID, Limit: 10000})
	if err != nil {
		b.t.Fatal(err)
	}
	var ids []int64
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}

// TestEventsReplayAcrossReconnect: a client that disconnects and comes
// back with its cursor sees every event of its mission exactly once, in
// order: replayed, then live.
func TestEventsReplayAcrossReconnect(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		ctx := context.Background()
		m := b.createMission()
		other := b.createMission() // its events must not show up
		// A model_call step.completed with native: the socket strips it.
		seq := 0
		if err := b.st.Tx(ctx, func(q store.Queries) error {
			_, err := q.InsertEvent(ctx, store.Event{MissionID: m.ID, RunID: m.RootRunID, Seq: &seq, Kind: "step.completed",
				Payload: []byte(`{"kind":"model_call","name":"model","result":{"blocks":[],"native":{"raw":1}},"seq":0}`), CreatedAt: 1})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		b.emit(m.ID, 30, 10)
		b.emit(other.ID, 5, 10)

		var seen []int64
		// catchUp reads the socket until the client has every event the
		// store shows, and at least atLeast. On PostgreSQL a read whose
		// sequencer finds the lock taken (the server's own listener is
		// positioning) does not see the newest commits yet: the store's
		// count is polled, not read once.
		var c *websocket.Conn
		catchUp := func(atLeast int) []int64 {
			t.Helper()
			deadline := time.Now().Add(10 * time.Second)
			for {
				all := b.eventIDs(m.ID)
				for len(seen) < len(all) {
					seen = append(seen, b.next(ctx, c).ID)
				}
				if len(all) >= atLeast && len(all) == len(seen) {
					return all
				}
				if time.Now().After(deadline) {
					t.Fatalf("the store shows %d events, want at least %d; the client saw %d", len(all), atLeast, len(seen))
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		n0 := len(b.eventIDs(m.ID))
		c = b.dial(ctx, "?cursor=0&missionId="+m.ID)
		for len(seen) < 20 {
			e := b.next(ctx, c)
			if e.MissionID != m.ID {
				t.Fatalf("event of another mission: %+v", e)
			}
			if e.Kind == "step.completed" && strings.Contains(string(e.Payload), "native") {
				t.Fatalf("native reached the socket: %s", e.Payload)
			}
			seen = append(seen, e.ID)
		}
		_ = c.Close(websocket.StatusNormalClosure, "")

		b.emit(m.ID, 10, 10) // while disconnected
		c = b.dial(ctx, fmt.Sprintf("?cursor=%d&missionId=%s", seen[len(seen)-1], m.ID))
		catchUp(n0 + 10)
		// Live, after the replay: an owner message through the service.
		if _, err := b.svc.PostMessage(ctx, "test", m.RootRunID, "hello"); err != nil {
			t.Fatal(err)
		}
		b.emit(m.ID, 3, 10)
		all := catchUp(n0 + 13)
		if got, want := fmt.Sprint(seen), fmt.Sprint(all); got != want {
			t.Fatalf("client saw\n%s\nwant\n%s", got, want)
		}
	})
}

// TestEventsGapNotice: past 5,000 replayed events the server sends a gap
// notice with the latest id and goes on live from there.
func TestEventsGapNotice(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		ctx := context.Background()
		b.emit("m1", api.MaxReplay+10, 0)
		ids := b.eventIDs("m1")
		c := b.dial(ctx, "?cursor=0")
		t0 := time.Now()
		for i := 0; i < api.MaxReplay; i++ {
			if e := b.next(ctx, c); e.ID != ids[i] {
				t.Fatalf("replay %d: id %d, want %d", i, e.ID, ids[i])
			}
		}
		t.Logf("%s: replayed %d events in %v", db.Driver, api.MaxReplay, time.Since(t0))
		e := b.next(ctx, c)
		var n api.Notice
		_ = json.Unmarshal(e.Payload, &n)
		if e.Kind != "system.notice" || e.ID != -1 || n.Code != "gap" || n.LatestID != ids[len(ids)-1] {
			t.Fatalf("after the replay: %+v %s", e, e.Payload)
		}
		b.emit("m1", 1, 0)
		if e := b.next(ctx, c); e.ID != n.LatestID+1 {
			t.Fatalf("live after the gap: id %d, want %d", e.ID, n.LatestID+1)
		}
	})
}

func TestEventsAuth(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.New(t, "sqlite"), setupOpts{api: api.Options{AuthRecheck: 20 * time.Millisecond}})
	ctx := context.Background()

	// No token: 401 before any upgrade; a token in the query is ignored.
	for _, q := range []string{"", "?token=" + b.read} {
		_, resp, err := websocket.Dial(ctx, b.wsURL(q), nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("dial %q without a token: %v %v", q, err, resp)
		}
	}
	// A browser from a foreign origin: 403.
	_, resp, err := websocket.Dial(ctx, b.wsURL(""), &websocket.DialOptions{HTTPHeader: http.Header{
		"Authorization": {"Bearer " + b.read}, "Origin": {"https://evil.example"}}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("foreign origin: %v %v", err, resp)
	}

	// The subprotocol carries the token; the server selects aos.v1. When
	// the token is revoked the socket says so and closes with 4401.
	tok, err := b.svc.CreateToken(ctx, "test", "browser", []string{"read"})
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := websocket.Dial(ctx, b.wsURL("?cursor=0"), &websocket.DialOptions{Subprotocols: []string{api.Subprotocol, "bearer." + tok.Secret}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	if c.Subprotocol() != api.Subprotocol {
		t.Fatalf("subprotocol %q", c.Subprotocol())
	}
	if err := b.svc.RevokeToken(ctx, "test", tok.ID); err != nil {
		t.Fatal(err)
	}
	for {
		e := b.next(ctx, c)
		if e.Kind == "system.notice" {
			if !strings.Contains(string(e.Payload), `"auth.expired"`) {
				t.Fatalf("notice %s", e.Payload)
			}
			break
		}
	}
	_, _, err = c.Read(ctx)
	if websocket.CloseStatus(err) != api.CloseAuthExpired {
		t.Fatalf("close: %v, want 4401", err)
	}
}

// TestEventsSlowConsumer: a client that stops reading is dropped with 1008
// once its bounded buffer fills; the server does not buffer without bound.
func TestEventsSlowConsumer(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.New(t, "sqlite"), setupOpts{api: api.Options{SendBuffer: 4}})
	ctx := context.Background()
	c := b.dial(ctx, "")
	waitFor(t, 5*time.Second, "the socket to register", func() bool { return b.api.WSClients() == 1 })
	// ~48 MiB of events, more than loopback socket buffers hold.
	for i := 0; i < 6; i++ {
		b.emit("m1", 1000, 8<<10)
	}
	waitFor(t, 20*time.Second, "the slow client to be dropped", func() bool { return b.api.WSClients() == 0 })
	// The client is told 1008 when the server is between frames; a write
	// cut mid-frame can only end the connection. Either way it is gone,
	// never a normal close.
	c.SetReadLimit(1 << 30)
	for {
		_, _, err := c.Read(ctx)
		if err == nil {
			continue
		}
		if s := websocket.CloseStatus(err); s == websocket.StatusNormalClosure || s == websocket.StatusGoingAway {
			t.Fatalf("closed with %v, want 1008 or a cut connection", err)
		}
		break
	}
	b.record([]byte("{}"))
}

// TestEventsNoGapsUnderLoad: while events commit continuously, clients
// that connect (and reconnect) at arbitrary moments each see every event
// of the mission exactly once, in order: the replay and the shared live
// listener are stitched without a gap or a duplicate.
func TestEventsNoGapsUnderLoad(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		ctx := context.Background()
		stop := make(chan struct{})
		emitted := make(chan struct{})
		go func() {
			defer close(emitted)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				b.emit("m", 1+i%3, 0)
				b.emit("other", 1, 0)
			}
		}()
		results := make(chan []int64, 8)
		for i := 0; i < 8; i++ {
			go func() {
				var seen []int64
				c := b.dial(ctx, "?cursor=0&missionId=m")
				for n := 0; n < 20+i*15; n++ {
					seen = append(seen, b.next(ctx, c).ID)
				}
				if i%2 == 0 { // reconnect with the cursor
					_ = c.Close(websocket.StatusNormalClosure, "")
					c = b.dial(ctx, fmt.Sprintf("?cursor=%d&missionId=m", seen[len(seen)-1]))
				}
				for n := 0; n < 100; n++ {
					seen = append(seen, b.next(ctx, c).ID)
				}
				_ = c.Close(websocket.StatusNormalClosure, "")
				results <- seen
			}()
		}
		var all [][]int64
		for i := 0; i < 8; i++ {
			select {
			case r := <-results:
				all = append(all, r)
			case <-time.After(30 * time.Second):
				t.Fatal("a client did not finish (see its failure above)")
			}
		}
		close(stop)
		<-emitted
		ids := b.eventIDs("m")
		for i, seen := range all {
			if len(seen) > len(ids) || fmt.Sprint(seen) != fmt.Sprint(ids[:len(seen)]) {
				t.Fatalf("client %d saw %v\nwant a prefix of %v", i, seen, ids)
			}
		}
	})
}
