package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/aos-run/aos/internal/wire"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/auth"
	"github.com/aos-run/aos/internal/mission"
)

// The events WebSocket (GET /api/v1/events?cursor=&missionId=).
//
// Auth: the same token as the API, in the Authorization header (CLI and
// other non-browser clients) or, from a browser, as the subprotocol
// "bearer.<token>" offered together with Subprotocol; the server selects
// Subprotocol and never echoes the token. Or the owner's session cookie,
// when the Origin is the public origin. It is never read from the URL,
// where it would land in logs and history. The token is re-validated every
// Options.AuthRecheck; once it is revoked (or the session expires) the server sends system.notice
// {code:"auth.expired"} and closes with 4401.
//
// Origin: a browser's Origin must be the server's own host or match
// Options.OriginPatterns, else the handshake gets 403.
//
// Protocol: one JSON mission.Event per text frame. On connect the server
// replays persisted events with id > cursor (cursor absent: none, live
// only), at most MaxReplay. Live events come from one shared listener per
// server (hub.go), not one database poll per socket. If more remain it sends system.notice
// {code:"gap", latestId} and goes on live from latestId: the client
// refetches state over REST. If retention pruned events after the cursor
// (aos settings retentionEventsDays), it sends system.notice
// {code:"cursor.expired", latestId} instead of the replay and goes on live
// from latestId: the client refetches state. Then live events follow as they commit, and
// this process's transient events (model.delta) with id -1. A client that
// falls Options.SendBuffer events behind is dropped with 1008 ("slow
// consumer"); the server never buffers without bound.

// NoticeCursorExpired is the system.notice code sent instead of a replay
// when retention pruned events after the client's cursor
// (mission.CursorExpiredError): its latestId is where the stream goes on.
const NoticeCursorExpired = wire.NoticeCursorExpired

// Subprotocol is the WebSocket subprotocol the server speaks.
const Subprotocol = wire.Subprotocol

// MaxReplay bounds the events replayed on connect.
const MaxReplay = wire.MaxReplay

// CloseAuthExpired is the close code sent when the token stops being valid.
const CloseAuthExpired websocket.StatusCode = wire.CloseAuthExpired

// writeTimeout bounds one frame's write to a client.
const writeTimeout = 10 * time.Second

// Notice is wire.Notice, its JSON form on the API.
type Notice = wire.Notice

func notice(n Notice) mission.Event {
	b, _ := json.Marshal(n)
	return mission.Event{ID: -1, Kind: "system.notice", Payload: b, CreatedAt: time.Now().UnixMilli()}
}

var errSlowConsumer = errors.New("slow consumer")

func (s *Server) events(w http.ResponseWriter, r *http.Request, p mission.Principal) error {
	cursorQ, err := queryInt(r, "cursor")
	if err != nil {
		return err
	}
	missionID := r.URL.Query().Get("missionId")
	var cursor int64
	if cursorQ == nil {
		if cursor, err = s.svc.LatestEventID(r.Context()); err != nil {
			return err
		}
	} else if cursor = *cursorQ; cursor < 0 {
		return &apiError{status: http.StatusBadRequest, code: codeInvalidQuery, msg: "cursor must be ≥ 0"}
	}
	valid := s.revalidator(r, p)
	if p.SessionID != "" && r.Header.Get("Origin") != s.opts.Auth.PublicOrigin() {
		// The cookie rides along with any page's request; only the
		// console's own origin may use it for the socket.
		return &apiError{status: http.StatusForbidden, code: codeCSRF, msg: "the request's Origin is not this server's public origin"}
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}, OriginPatterns: s.opts.OriginPatterns})
	if err != nil {
		return nil // Accept has written the refusal (403 for a foreign Origin)
	}
	s.wsClients.Add(1)
	defer s.wsClients.Add(-1)
	defer c.CloseNow()
	ctx := c.CloseRead(r.Context()) // we read nothing; this answers pings and sees the close
	code, reason := s.stream(ctx, c, valid, cursor, missionID)
	_ = c.Close(code, reason)
	return nil
}

// stream replays, then forwards live events until the client leaves, falls
// behind or loses its token. It returns the close code and reason.
func (s *Server) stream(ctx context.Context, c *websocket.Conn, valid func(context.Context) bool, cursor int64, missionID string) (websocket.StatusCode, string) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	send := func(e mission.Event) error {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, writeTimeout)
		defer cancel()
		if err := c.Write(wctx, websocket.MessageText, b); err != nil {
			return err
		}
		s.opts.Metrics.EventSent()
		return nil
	}
	// Subscribe before replaying: an event the hub publishes after this
	// point comes live; one it published before had committed, so the
	// replay (which runs after this point) reads it. Nothing falls between,
	// and what arrives both ways is skipped by id.
	live, err := s.hub.subscribe(ctx, missionID)
	if err != nil {
		return failed(ctx)
	}
	defer s.hub.unsubscribe(live)
	go func() {
		select {
		case <-live.end: // dropped by the hub: a blocked write must end too
			cancel(live.err)
		case <-ctx.Done():
		}
	}()
	evs, err := s.svc.ReplayEvents(ctx, cursor, missionID, MaxReplay+1)
	var expired *mission.CursorExpiredError
	if errors.As(err, &expired) {
		// Retention pruned events after the cursor: say so, typed, and go
		// on live from the latest id; the client refetches state.
		if err := send(notice(Notice{Code: NoticeCursorExpired, Message: fmt.Sprintf("events up to %d were pruned by retention; refetch and resume from latestId", expired.Through),
			LatestID: expired.LatestID})); err != nil {
			return ended(ctx)
		}
		cursor, evs, err = expired.LatestID, nil, nil
	}
	if err != nil {
		return failed(ctx)
	}
	gap := len(evs) > MaxReplay
	if gap {
		evs = evs[:MaxReplay]
	}
	for _, e := range evs {
		if err := send(e); err != nil {
			return ended(ctx)
		}
		cursor = e.ID
	}
	if gap {
		latest, err := s.svc.LatestEventID(ctx)
		if err != nil {
			return failed(ctx)
		}
		if err := send(notice(Notice{Code: "gap", Message: "more than 5000 events to replay; refetch and resume from latestId", LatestID: latest})); err != nil {
			return ended(ctx)
		}
		cursor = latest
	}

	out := make(chan mission.Event, s.opts.SendBuffer)
	push := func(e mission.Event) error {
		select {
		case out <- e:
			return nil
		default:
			s.opts.Metrics.EventDropped()
			cancel(errSlowConsumer)
			return errSlowConsumer
		}
	}
	transient := s.svc.SubscribeTransient(ctx, missionID)
	recheck := time.NewTicker(s.opts.AuthRecheck)
	defer recheck.Stop()
	for {
		select {
		case <-ctx.Done():
			return ended(ctx)
		case e := <-live.ch:
			if e.ID <= cursor {
				continue // already sent by the replay
			}
			cursor = e.ID
			if err := send(e); err != nil {
				return ended(ctx)
			}
		case e := <-out:
			if err := send(e); err != nil {
				return ended(ctx)
			}
		case e, ok := <-transient:
			if !ok {
				transient = nil // ctx ended; Done is ready too
				continue
			}
			if err := push(e); err != nil {
				return websocket.StatusPolicyViolation, "slow consumer"
			}
		case <-recheck.C:
			if !valid(ctx) {
				_ = send(notice(Notice{Code: "auth.expired", Message: "the credential is no longer valid"}))
				return CloseAuthExpired, "auth expired"
			}
		}
	}
}

// revalidator returns a check that the request's credential (its token or
// its session) is still valid; a database fault counts as valid, so the
// socket is not closed for a passing error.
func (s *Server) revalidator(r *http.Request, p mission.Principal) func(context.Context) bool {
	if p.SessionID != "" {
		sid := sessionCookie(r)
		return func(ctx context.Context) bool {
			_, err := s.opts.Auth.Check(ctx, sid)
			return !errors.Is(err, auth.ErrUnauthorized)
		}
	}
	secret := tokenOf(r)
	return func(ctx context.Context) bool {
		_, err := s.svc.Authenticate(ctx, secret)
		return !errors.Is(err, mission.ErrUnauthorized)
	}
}

// ended says why a stream stopped: a slow consumer is told so (1008).
func ended(ctx context.Context) (websocket.StatusCode, string) {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errSlowConsumer):
		return websocket.StatusPolicyViolation, "slow consumer"
	case errors.Is(cause, errHubStopped):
		return websocket.StatusTryAgainLater, "event listener stopped; reconnect with your cursor"
	}
	return websocket.StatusGoingAway, ""
}

// failed says why the replay stopped: the stream ended, or the database
// failed (1011).
func failed(ctx context.Context) (websocket.StatusCode, string) {
	if ctx.Err() != nil {
		return ended(ctx)
	}
	return websocket.StatusInternalError, "replay failed"
}
