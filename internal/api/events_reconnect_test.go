package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestEventsBackToBackReplays: a client that replays a mission, hangs up
// and at once dials again, over and over (what bench/scale and a
// reconnecting console do), gets every handshake answered and every
// replay whole: each socket brings the mission's events exactly once, in
// order, and no socket is cut.
//
// Each hang-up is the last subscriber leaving, so the server's shared
// listener stops and its SQLite bus subscription closes its datagram
// socket, while the next handshake is being accepted. Before the fix that
// subscription's closer shut down its socket's descriptor number after the
// reader had already closed it; when the new connection had just been given
// that number, its read side was shut: the handshake saw EOF, or the
// socket closed with 1001 (going away) or EOF after a few events.
func TestEventsBackToBackReplays(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		m := b.createMission()
		b.emit(m.ID, 40, 10)
		want := fmt.Sprint(b.eventIDs(m.ID))
		const rounds = 300
		var failures []string
		for i := range rounds {
			got, err := b.replayOnce(m.ID, len(b.eventIDs(m.ID)))
			if err != nil {
				failures = append(failures, fmt.Sprintf("round %d: %v", i, err))
				continue
			}
			if fmt.Sprint(got) != want {
				t.Fatalf("round %d replayed %v, want %v", i, got, want)
			}
		}
		if len(failures) > 0 {
			t.Fatalf("%d of %d back-to-back replays failed; first: %s", len(failures), rounds, failures[0])
		}
	})
}

// replayOnce dials the events socket of missionID from cursor 0, reads n
// events and hangs up at once (no close handshake), as bench/scale does.
func (b *bundle) replayOnce(missionID string, n int) ([]int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, b.wsURL("?cursor=0&missionId="+missionID), &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + b.read}}})
	if err != nil {
		return nil, fmt.Errorf("dial: %w", err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 20)
	var ids []int64
	for len(ids) < n {
		_, data, err := c.Read(ctx)
		if err != nil {
			return ids, fmt.Errorf("after %d of %d events (close status %d): %w", len(ids), n, websocket.CloseStatus(err), err)
		}
		var e mission.Event
		if err := json.Unmarshal(data, &e); err != nil {
			return ids, fmt.Errorf("decode %s: %w", data, err)
		}
		ids = append(ids, e.ID)
	}
	return ids, nil
}
