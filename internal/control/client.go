package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// Client calls a control socket. Each call is one connection.
type Client struct {
	path string
}

// NewClient returns a client of the socket at path.
func NewClient(path string) *Client { return &Client{path: path} }

// NewCommandID returns a fresh command_id.
func NewCommandID() string { return "cmd_" + randomID() }

// conn is a client connection whose reads and writes end with ctx.
type conn struct {
	*net.UnixConn
	stop func() bool
}

// Close closes the connection and forgets ctx.
func (c *conn) Close() error {
	c.stop()
	return c.UnixConn.Close()
}

func (c *Client) dial(ctx context.Context) (*conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", c.path)
	if err != nil {
		return nil, fmt.Errorf("control: dial the local socket: %w", err)
	}
	uc := nc.(*net.UnixConn)
	return &conn{UnixConn: uc, stop: context.AfterFunc(ctx, func() { _ = uc.SetDeadline(time.Unix(1, 0)) })}, nil
}

// Available reports whether a server answers on the socket.
func (c *Client) Available(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var p ProcessStatus
	return c.Call(ctx, OpProcessStatus, "", nil, &p) == nil
}

func request(op, commandID string, args any, cursor *Marker) (Envelope, error) {
	req := Request{CommandID: commandID, Cursor: cursor}
	if args != nil {
		b, err := json.Marshal(args)
		if err != nil {
			return Envelope{}, fmt.Errorf("control: encode %s arguments: %w", op, err)
		}
		req.Args = b
	}
	p, err := json.Marshal(req)
	if err != nil {
		return Envelope{}, err
	}
	return Envelope{ProtocolVersion: ProtocolVersion, Kind: KindRequest, MessageID: "m_" + randomID(), Operation: op, Payload: p}, nil
}

// readReply reads the next frame and returns its response, or its error
// as an *Error.
func readReply(conn net.Conn) (Envelope, Response, error) {
	b, err := ReadFrame(conn)
	if err != nil {
		return Envelope{}, Response{}, fmt.Errorf("control: read reply: %w", err)
	}
	env, perr := DecodeEnvelope(b)
	if perr != nil {
		return env, Response{}, fmt.Errorf("control: bad reply: %w", perr)
	}
	switch env.Kind {
	case KindError:
		var e Error
		if err := json.Unmarshal(env.Payload, &e); err != nil {
			return env, Response{}, fmt.Errorf("control: bad error reply: %w", err)
		}
		return env, Response{}, &e
	case KindResponse:
		var r Response
		if err := strict(env.Payload, &r); err != nil {
			return env, Response{}, fmt.Errorf("control: bad response: %w", err)
		}
		return env, r, nil
	}
	return env, Response{}, fmt.Errorf("control: unexpected %s frame", env.Kind)
}

// Call runs op with args (commandID set for a mutation) and decodes its
// result into out (when not nil). A refused request is an *Error.
func (c *Client) Call(ctx context.Context, op, commandID string, args, out any) error {
	_, err := c.CallResponse(ctx, op, commandID, args, out)
	return err
}

// CallResponse is Call returning the whole response.
func (c *Client) CallResponse(ctx context.Context, op, commandID string, args, out any) (Response, error) {
	env, err := request(op, commandID, args, nil)
	if err != nil {
		return Response{}, err
	}
	conn, err := c.dial(ctx)
	if err != nil {
		return Response{}, err
	}
	defer conn.Close()
	if err := WriteFrame(conn, env); err != nil {
		return Response{}, fmt.Errorf("control: send %s: %w", op, err)
	}
	renv, r, err := readReply(conn)
	if err != nil {
		return r, err
	}
	if renv.CorrelationID != env.MessageID {
		return r, errors.New("control: reply to another request")
	}
	if out != nil && len(r.Result) > 0 {
		if err := json.Unmarshal(r.Result, out); err != nil {
			return r, fmt.Errorf("control: decode %s result: %w", op, err)
		}
	}
	return r, nil
}

// Subscribe opens the event stream (of missionID, "" for all) after
// cursor (nil: from now on). onSnapshot gets the daemon's marker before
// any event; fn gets each event with its event_sequence. It returns fn's
// error, the connection's, or an *Error such as replay_unavailable.
func (c *Client) Subscribe(ctx context.Context, missionID string, cursor *Marker, onSnapshot func(Marker) error, fn func(seq uint64, e Event) error) error {
	env, err := request(OpSubscribe, "", SubscribeArgs{MissionID: missionID}, cursor)
	if err != nil {
		return err
	}
	conn, err := c.dial(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := WriteFrame(conn, env); err != nil {
		return fmt.Errorf("control: subscribe: %w", err)
	}
	_, r, err := readReply(conn)
	if err != nil {
		return err
	}
	if r.Snapshot == nil {
		return errors.New("control: subscription without a snapshot marker")
	}
	if err := onSnapshot(*r.Snapshot); err != nil {
		return err
	}
	for {
		b, err := ReadFrame(conn)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("control: event stream: %w", err)
		}
		ev, perr := DecodeEnvelope(b)
		if perr != nil {
			return fmt.Errorf("control: bad event: %w", perr)
		}
		if ev.Kind == KindError {
			var e Error
			_ = json.Unmarshal(ev.Payload, &e)
			return &e
		}
		if ev.Kind != KindEvent || ev.EventSequence == nil {
			return fmt.Errorf("control: unexpected %s frame in the event stream", ev.Kind)
		}
		var e Event
		if err := json.Unmarshal(ev.Payload, &e); err != nil {
			return fmt.Errorf("control: bad event payload: %w", err)
		}
		if err := fn(*ev.EventSequence, e); err != nil {
			return err
		}
	}
}
