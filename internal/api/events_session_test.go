package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestEventsSessionCookie: a browser's session cookie opens the events
// socket from the public origin only; when the session is revoked or
// expires, the socket gets system.notice auth.expired and closes 4401.
func TestEventsSessionCookie(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db, setupOpts{api: api.Options{AuthRecheck: 20 * time.Millisecond}})
		ctx := context.Background()
		o := b.setUpOwner()
		dial := func(sid, origin string) (*websocket.Conn, *http.Response, error) {
			h := http.Header{"Cookie": {"aos_sid=" + sid}}
			if origin != "" {
				h.Set("Origin", origin)
			}
			c, resp, err := websocket.Dial(ctx, b.wsURL("?cursor=0"), &websocket.DialOptions{HTTPHeader: h, Subprotocols: []string{api.Subprotocol}})
			if err == nil {
				t.Cleanup(func() { _ = c.CloseNow() })
			}
			return c, resp, err
		}
		for _, origin := range []string{"", "https://evil.example", strings.Replace(b.origin, "localhost", "127.0.0.1", 1)} {
			if _, resp, err := dial(o.sid, origin); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("cookie socket from origin %q: %v %v, want 403", origin, err, resp)
			}
		}
		expectExpired := func(c *websocket.Conn) {
			t.Helper()
			for {
				e := b.next(ctx, c)
				if e.Kind == "system.notice" {
					if !strings.Contains(string(e.Payload), `"auth.expired"`) {
						t.Fatalf("notice %s", e.Payload)
					}
					break
				}
			}
			if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != api.CloseAuthExpired {
				t.Fatalf("close: %v, want 4401", err)
			}
		}
		// Revoked (logout from another tab).
		c, _, err := dial(o.sid, b.origin)
		if err != nil {
			t.Fatalf("cookie socket from the public origin: %v", err)
		}
		if status, body := b.doCookie("POST", "/auth/logout", nil, o.sid, o.csrf); status != 204 {
			t.Fatalf("logout: %d %s", status, body)
		}
		expectExpired(c)
		// Expired (idle timeout passes while connected).
		resp, _ := b.login(o, nil)
		sid := cookieOf(resp).Value
		b.secret(sid)
		c, _, err = dial(sid, b.origin)
		if err != nil {
			t.Fatal(err)
		}
		b.clk.Add(25 * time.Hour)
		expectExpired(c)
	})
}
