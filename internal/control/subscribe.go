package control

import (
	"context"
	"encoding/json"
	"net"
	"time"
)

// subscribe turns the connection into an event stream: the response with
// the snapshot marker, the retained events after the cursor, then live
// events, each with its event_sequence, until the client goes or falls
// behind (then it reconnects with its cursor).
func (s *Server) subscribe(ctx context.Context, c *net.UnixConn, env Envelope) {
	var req Request
	if len(env.Payload) > 0 {
		if err := strict(env.Payload, &req); err != nil {
			s.sendError(c, env.MessageID, errorf(CodeMalformedFrame, "request payload: %s", safeJSONError(err)))
			return
		}
	}
	var a SubscribeArgs
	if len(req.Args) > 0 {
		if err := strict(req.Args, &a); err != nil {
			s.sendError(c, env.MessageID, errorf(CodeMalformedFrame, "arguments of %s: %s", opSubscribe, safeJSONError(err)))
			return
		}
	}
	if req.CommandID != "" {
		s.sendError(c, env.MessageID, errorf(CodeMalformedFrame, "command_id is for mutating operations"))
		return
	}
	sub, replay, m, serr := s.hub.subscribe(req.Cursor)
	if serr != nil {
		s.sendError(c, env.MessageID, serr)
		return
	}
	defer s.hub.unsubscribe(sub)
	p, _ := json.Marshal(Response{Snapshot: &m})
	if err := WriteFrame(c, Envelope{ProtocolVersion: ProtocolVersion, Kind: KindResponse, MessageID: "m_" + randomID(),
		CorrelationID: env.MessageID, Operation: opSubscribe, Payload: p}); err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	// The client sends nothing more; a read returning means it left.
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		var b [1]byte
		_, _ = c.Read(b[:])
	}()
	send := func(x sequenced) bool {
		if a.MissionID != "" && x.ev.MissionID != a.MissionID {
			return true
		}
		seq := x.seq
		p, _ := json.Marshal(Event{Type: x.ev.Kind, Subject: x.ev.MissionID, Revision: x.ev.ID, Event: x.ev})
		return WriteFrame(c, Envelope{ProtocolVersion: ProtocolVersion, Kind: KindEvent, MessageID: "m_" + randomID(),
			CorrelationID: env.MessageID, EventSequence: &seq, Payload: p}) == nil
	}
	for _, x := range replay {
		if !send(x) {
			return
		}
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-gone:
			return
		case x, ok := <-sub.ch:
			if !ok || !send(x) {
				return
			}
		}
	}
}
