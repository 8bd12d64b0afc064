package device

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/store"
)

// writeTimeout bounds one frame's write to a device that does not read.
const writeTimeout = 10 * time.Second

// StatusRevoked closes a socket whose device was revoked.
const StatusRevoked websocket.StatusCode = 4403

// conn is one device socket.
type conn struct {
	s   *Service
	ws  *websocket.Conn
	dev store.Device
	// ctx is the operations' context: it ends when the device is revoked
	// or the socket closes. life is the socket's: reads and writes.
	ctx     context.Context
	cancel  context.CancelFunc
	life    context.Context
	revoked atomic.Bool
	slots   chan struct{} // in-flight operations
	wg      sync.WaitGroup

	// writeHook replaces the socket in the package's own tests.
	writeHook func([]byte)

	// Read by the read loop only.
	hello bool
	caps  map[string]bool
	ids   recentIDs
}

// Serve upgrades an authenticated device's request to the WebSocket and
// speaks the protocol until either side closes or the device is revoked.
func (s *Service) Serve(w http.ResponseWriter, r *http.Request, d store.Device) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept wrote the refusal
	}
	ws.SetReadLimit(s.opts.Limits.MaxMessage)
	life, end := context.WithCancel(context.WithoutCancel(r.Context()))
	ctx, cancel := context.WithCancel(life)
	c := &conn{s: s, ws: ws, dev: d, ctx: ctx, cancel: cancel, life: life, slots: make(chan struct{}, s.opts.Limits.MaxInFlight), ids: recentIDs{n: s.opts.Limits.RequestIDs}}
	if err := s.register(c); err != nil {
		code, why := StatusRevoked, "device revoked"
		if errors.Is(err, errTooManySockets) {
			code, why = websocket.StatusTryAgainLater, "too many connections for this device"
		}
		_ = ws.Close(code, why)
		cancel()
		end()
		return
	}
	defer func() {
		cancel()
		end()
		c.wg.Wait()
		s.unregister(c)
		_ = ws.CloseNow()
	}()
	if err := s.st.TouchDevice(ctx, d.ID, s.opts.Now().UnixMilli()); err != nil {
		s.opts.Logger.Error("device: touch", "err", err.Error())
	}
	go c.recheck()
	for {
		typ, data, err := ws.Read(life)
		if err != nil || c.revoked.Load() {
			return
		}
		if typ != websocket.MessageText {
			c.refuse("error", nil, agent.CodeInvalidRequest, "frames are JSON text")
			continue
		}
		c.handle(data)
	}
}

// errTooManySockets refuses a device's socket past Limits.MaxSockets.
var errTooManySockets = errors.New("device: too many sockets")

// register adds c to its device's live sockets, unless the device was
// revoked meanwhile or has too many.
func (s *Service) register(c *conn) error {
	d, err := s.st.GetDevice(c.ctx, c.dev.ID)
	if err != nil || d.RevokedAt != 0 {
		return ErrUnauthorized
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns[c.dev.ID]) >= s.opts.Limits.MaxSockets {
		return errTooManySockets
	}
	if s.conns[c.dev.ID] == nil {
		s.conns[c.dev.ID] = map[*conn]struct{}{}
	}
	s.conns[c.dev.ID][c] = struct{}{}
	return nil
}

func (s *Service) unregister(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns[c.dev.ID], c)
	if len(s.conns[c.dev.ID]) == 0 {
		delete(s.conns, c.dev.ID)
	}
}

// revoke closes the socket at once: running operations see their context
// end, nothing more is read or sent, and the socket no longer counts as
// the device's (List and MaxSockets) from the moment revoke returns, not
// from when its read loop gets round to ending.
func (c *conn) revoke() {
	if c.revoked.Swap(true) {
		return
	}
	c.cancel()
	c.s.unregister(c)
	// Close sends the close frame now and then waits (up to 5 s) for the
	// device's; the caller does not wait for that.
	go func() { _ = c.ws.Close(StatusRevoked, "device revoked") }()
}

// recheck closes the socket when its device was revoked elsewhere.
func (c *conn) recheck() {
	t := time.NewTicker(c.s.opts.Limits.Recheck)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			d, err := c.s.st.GetDevice(c.ctx, c.dev.ID)
			if err == nil && d.RevokedAt != 0 || errors.Is(err, store.ErrNotFound) {
				// Revoked through another server: this one's agent service
				// must stop the device's preparations too.
				if ops := c.s.opts.Ops; ops != nil {
					if err := ops.Revoke(context.WithoutCancel(c.ctx), Identity(c.dev.ID)); err != nil {
						c.s.opts.Logger.Error("device: revoke in the agent service", "err", err.Error())
					}
				}
				c.s.closeDevice(c.dev.ID)
				return
			}
		}
	}
}

// send writes one frame; a failure means the socket is closing.
func (c *conn) send(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		c.s.opts.Logger.Error("device: marshal frame", "err", err.Error())
		return
	}
	if c.revoked.Load() {
		return
	}
	c.write(b)
}

// write sends one text frame, bounded by writeTimeout.
func (c *conn) write(b []byte) {
	if c.writeHook != nil {
		c.writeHook(b)
		return
	}
	ctx, cancel := context.WithTimeout(c.life, writeTimeout)
	defer cancel()
	_ = c.ws.Write(ctx, websocket.MessageText, b)
}

// refuse answers a request with an error frame.
func (c *conn) refuse(typ string, rid *string, code, msg string) {
	c.send(ErrorFrame{Type: typ, RequestID: rid, Error: FrameError{Code: code, Message: msg}})
}

// handle reads one frame's envelope, applies the session's gates in order
// (rate, hello, requestId, capability, in-flight) and runs the operation.
func (c *conn) handle(data []byte) {
	var env map[string]json.RawMessage
	if err := json.Unmarshal(data, &env); err != nil || env == nil {
		c.refuse("error", nil, agent.CodeInvalidRequest, "a frame is one JSON object")
		return
	}
	var typ, rid string
	if err := json.Unmarshal(env["type"], &typ); err != nil || !validType(typ) {
		c.refuse("error", echoID(env), agent.CodeInvalidRequest, "type is required: an operation name")
		return
	}
	resType, echo := typ+"_result", echoID(env)
	if !c.s.allow(c.dev.ID) {
		c.refuse(resType, echo, agent.CodeRateLimited, "too many requests from this device; back off and retry with a new requestId")
		return
	}
	if !c.hello && typ != OpHello {
		c.refuse(resType, echo, agent.CodeHelloRequired, "send hello first")
		return
	}
	if err := json.Unmarshal(env["requestId"], &rid); err != nil || !isUUIDv4(rid) {
		c.refuse(resType, echo, agent.CodeInvalidRequest, "requestId is required: a fresh UUIDv4")
		return
	}
	if !c.ids.add(lower(rid)) {
		c.refuse(resType, echo, agent.CodeInvalidRequest, "requestId was already used on this connection; use a fresh UUIDv4")
		return
	}
	if typ == OpHello {
		c.doHello(data, rid)
		return
	}
	run := c.s.op(typ)
	if run == nil || !c.caps[typ] {
		c.refuse(resType, echo, agent.CodeUnsupportedCapability, "this server does not offer "+typ+" on this session")
		return
	}
	select {
	case c.slots <- struct{}{}:
	default:
		c.refuse(resType, echo, agent.CodeBackpressure, "too many requests in flight on this connection; wait for a result")
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		res, err := run(c, data, Header{Type: resType, RequestID: rid})
		// The slot is free before the answer goes out: a device that
		// sends its next request as soon as it reads this one has waited
		// for a result, as BACKPRESSURE asks.
		<-c.slots
		if err != nil {
			code, msg := c.s.present(typ, err)
			c.refuse(resType, &rid, code, msg)
			return
		}
		c.send(res)
	}()
}

// doHello negotiates the session: proto 1, and the capabilities both sides
// name.
func (c *conn) doHello(data []byte, rid string) {
	var req HelloRequest
	if err := decodeStrict(data, &req); err != nil {
		c.refuse("hello_result", &rid, agent.CodeInvalidRequest, err.(*protoError).msg)
		return
	}
	switch {
	case c.hello:
		c.refuse("hello_result", &rid, agent.CodeInvalidRequest, "hello was already done on this connection")
		return
	case req.Proto == nil:
		c.refuse("hello_result", &rid, agent.CodeInvalidRequest, "proto is required")
		return
	case *req.Proto != Proto:
		c.refuse("hello_result", &rid, agent.CodeProtoUnsupported, "this server speaks proto 1")
		return
	case req.Capabilities == nil || len(req.Capabilities) > 64:
		c.refuse("hello_result", &rid, agent.CodeInvalidRequest, "capabilities is required: the operations the device uses (at most 64)")
		return
	}
	offered := c.s.capabilities()
	c.caps = map[string]bool{}
	for _, name := range req.Capabilities {
		if slices.Contains(offered, name) {
			c.caps[name] = true
		}
	}
	c.hello = true
	out := HelloResult{Header: Header{Type: "hello_result", RequestID: rid}, Proto: Proto, DeviceID: c.dev.ID, ServerInstanceID: c.s.instance, Capabilities: offered}
	if c.s.opts.Ops != nil {
		out.MachineID = c.s.opts.Ops.MachineID()
	}
	c.send(out)
}

// capabilities are what this server offers: all of them with an agent
// service, none without.
func (s *Service) capabilities() []string {
	if s.opts.Ops == nil {
		return []string{}
	}
	return slices.Clone(Capabilities)
}

// present turns an operation's error into a code and a message safe to
// show: the agent service's typed errors keep their code and message;
// anything else is INTERNAL, its text only in the log.
func (s *Service) present(op string, err error) (string, string) {
	var pe *protoError
	var ae *agent.Error
	switch {
	case errors.As(err, &pe):
		return pe.code, pe.msg
	case errors.As(err, &ae):
		msg := ae.Message
		if msg == "" {
			msg = ae.Code
		}
		return ae.Code, msg
	default:
		s.opts.Logger.Error("device: operation failed", "op", op, "err", err.Error())
		return agent.CodeInternal, "internal error: no confirmed result; retry the same request with a new requestId, or poll"
	}
}

// echoID returns the frame's requestId to echo in a refusal: a string of at
// most 64 bytes, else null.
func echoID(env map[string]json.RawMessage) *string {
	raw := env["requestId"]
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil || len(s) > 64 {
		return nil // absent, null, not a string, or too long to echo
	}
	return &s
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
