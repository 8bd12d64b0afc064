package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/wire"
)

// ErrStop, returned by a Follow callback, ends Follow with a nil error.
var ErrStop = errors.New("client: stop following")

// ErrAuthExpired: the server closed the events socket because the token
// is no longer valid (system.notice auth.expired, close 4401).
var ErrAuthExpired = &Error{Status: http.StatusUnauthorized, Code: "auth_expired", Message: "the token is no longer valid"}

// FollowOptions configure Follow.
type FollowOptions struct {
	// MissionID limits the stream to one mission ("" for all).
	MissionID string
	// Cursor is the id of the last persisted event already seen: the
	// stream starts after it (0: from the beginning).
	Cursor int64
	// OnEvent receives each event once, in order: persisted ones (id > 0)
	// with increasing ids, transient ones (id -1) as they come, and
	// system.notice frames. An error ends Follow (ErrStop: with nil).
	OnEvent func(wire.Event) error
	// OnReconnect, if set, is told of each lost connection before the
	// next attempt, with the cursor it will resume from.
	OnReconnect func(cause error, cursor int64)
	// MaxOutage ends Follow with the last error when no connection could
	// be made for this long (2 minutes when 0).
	MaxOutage time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts
	// (100 ms and 5 s when 0); it doubles after each failed attempt.
	MinBackoff, MaxBackoff time.Duration
}

// Follow streams events over GET /events until ctx ends, OnEvent stops
// it, or the server refuses the token. A dropped connection is dialled
// again with backoff from the last persisted id received, so no event is
// skipped or delivered twice. A gap notice (more than wire.MaxReplay events
// to replay) is passed on and the cursor moves to its latestId, where the
// server goes on.
func (c *Client) Follow(ctx context.Context, o FollowOptions) error {
	if o.MaxOutage <= 0 {
		o.MaxOutage = 2 * time.Minute
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 100 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	cursor := o.Cursor
	backoff := o.MinBackoff
	var outageSince time.Time
	for {
		conn, err := c.dialEvents(ctx, cursor, o.MissionID)
		if err == nil {
			var frames int
			frames, err = c.read(ctx, conn, &cursor, o.OnEvent)
			if frames > 0 {
				// Only a connection that delivered something ends the
				// outage: a server that accepts and closes at once must not
				// reset the backoff into a 100 ms loop forever.
				outageSince, backoff = time.Time{}, o.MinBackoff
			}
			_ = conn.CloseNow()
			var ce *callbackError
			switch {
			case errors.Is(err, ErrStop):
				return nil
			case errors.As(err, &ce):
				return ce.err
			case !retriable(ctx, err):
				return err
			}
		} else if !retriable(ctx, err) {
			return err
		}
		if outageSince.IsZero() {
			outageSince = time.Now()
		} else if time.Since(outageSince) > o.MaxOutage {
			return err
		}
		if o.OnReconnect != nil {
			o.OnReconnect(err, cursor)
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		backoff = min(backoff*2, o.MaxBackoff)
	}
}

// retriable says whether a failed dial or a broken stream is worth another
// attempt: not after ctx ended, nor on a refusal (4xx), an expired token,
// or a callback's own error.
func retriable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var ue *UnreachableError
	if errors.As(err, &ue) {
		return true
	}
	var se *streamError
	if errors.As(err, &se) {
		return true
	}
	if e, ok := AsError(err); ok {
		return e.Status >= 500
	}
	return false
}

// streamError is a broken events stream (worth a reconnect).
type streamError struct{ err error }

func (e *streamError) Error() string { return "client: events stream broke: " + e.err.Error() }
func (e *streamError) Unwrap() error { return e.err }

// callbackError carries OnEvent's error out of read unchanged.
type callbackError struct{ err error }

func (e *callbackError) Error() string { return e.err.Error() }
func (e *callbackError) Unwrap() error { return e.err }

// read delivers frames until the stream ends; it returns how many frames
// arrived and why it ended.
func (c *Client) read(ctx context.Context, conn *websocket.Conn, cursor *int64, fn func(wire.Event) error) (frames int, err error) {
	for ; ; frames++ {
		_, data, err := conn.Read(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return frames, ctx.Err()
			}
			if websocket.CloseStatus(err) == websocket.StatusCode(wire.CloseAuthExpired) {
				return frames, ErrAuthExpired
			}
			return frames, &streamError{err: err}
		}
		var e wire.Event
		if err := json.Unmarshal(data, &e); err != nil {
			return frames, &streamError{err: fmt.Errorf("decode event: %w", err)}
		}
		if e.ID > 0 {
			if e.ID <= *cursor {
				continue // already delivered before a reconnect
			}
			*cursor = e.ID
		}
		if e.Kind == "system.notice" {
			var n wire.Notice
			_ = json.Unmarshal(e.Payload, &n)
			switch n.Code {
			case "gap", wire.NoticeCursorExpired:
				if n.LatestID > *cursor {
					*cursor = n.LatestID
				}
			case "auth.expired":
				if fn != nil {
					_ = fn(e)
				}
				return frames + 1, ErrAuthExpired
			}
		}
		if fn != nil {
			if err := fn(e); err != nil {
				if errors.Is(err, ErrStop) {
					return frames + 1, ErrStop
				}
				return frames + 1, &callbackError{err: err}
			}
		}
	}
}

// dialEvents opens GET /events from cursor. The token goes in the
// Authorization header, never in the URL.
func (c *Client) dialEvents(ctx context.Context, cursor int64, missionID string) (*websocket.Conn, error) {
	q := url.Values{"cursor": {strconv.FormatInt(cursor, 10)}}
	setIf(q, "missionId", missionID)
	u := c.endpoint("/events", q)
	u = "ws" + strings.TrimPrefix(u, "http")
	hdr := http.Header{}
	if c.token != "" {
		hdr.Set("Authorization", "Bearer "+c.token)
	}
	dctx, cancel := context.WithTimeout(ctx, c.http.Timeout)
	defer cancel()
	// coder/websocket refuses an http.Client with a Timeout: the context
	// bounds the handshake instead.
	hc := &http.Client{Transport: c.http.Transport, CheckRedirect: c.http.CheckRedirect}
	conn, resp, err := websocket.Dial(dctx, u, &websocket.DialOptions{HTTPClient: hc, HTTPHeader: hdr, Subprotocols: []string{wire.Subprotocol}})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols && resp.StatusCode != 0 {
			var data []byte
			if resp.Body != nil {
				data, _ = io.ReadAll(io.LimitReader(resp.Body, 1024))
			}
			return nil, decodeError("GET", "/events", resp.StatusCode, data, resp.Header)
		}
		return nil, &UnreachableError{Server: c.base.String(), Err: fmt.Errorf("GET /events: %w", err)}
	}
	conn.SetReadLimit(8 << 20)
	return conn, nil
}
