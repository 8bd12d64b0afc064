package control

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/aos-run/aos/internal/clients"
	"github.com/aos-run/aos/internal/hoststate"
	"github.com/aos-run/aos/internal/mission"
)

// idleTimeout closes a request connection that sends nothing for this
// long (an event stream has none).
const idleTimeout = 5 * time.Minute

// SocketName is the socket's file name in its directory.
const SocketName = "aos.sock"

// SocketPath is the control socket of a data dir: in a 0700 directory of
// its own.
func SocketPath(dataDir string) string { return filepath.Join(dataDir, "control", SocketName) }

// Options configure a Server.
type Options struct {
	// Service is the mission service every operation calls.
	Service *mission.Service
	// Commands keeps the durable command_id records.
	Commands *hoststate.Store
	// Clients is the daemon's client-process manager (client.*); nil:
	// the daemon declares none.
	Clients *clients.Manager
	// Integrations holds the change-set integration records that
	// integration.status reads (aos integrate writes them); nil: none.
	Integrations *hoststate.Store
	// Retain is how many events are kept for replay (4096 when 0).
	Retain int
	// Logger gets internal failures with their correlation id.
	Logger *slog.Logger
	// Version is shown by runtime.status.
	Version string
	// UID is the only peer uid accepted (os.Geteuid() when nil).
	UID *uint32
}

// Server serves the control protocol. One Server is one daemon identity:
// its event_sequence starts at 1 and a cursor of another identity cannot
// be replayed.
type Server struct {
	opts    Options
	id      string
	started time.Time
	hub     *hub
	uid     uint32
	log     *slog.Logger
	// mu serialises mutations, so a command_id is never dispatched twice
	// at once.
	mu    sync.Mutex
	conns sync.WaitGroup
}

// New returns a server with a fresh daemon identity.
func New(opts Options) (*Server, error) {
	if opts.Service == nil || opts.Commands == nil {
		return nil, errors.New("control: a server needs a mission service and a command store")
	}
	if opts.Retain <= 0 {
		opts.Retain = 4096
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	uid := uint32(os.Geteuid())
	if opts.UID != nil {
		uid = *opts.UID
	}
	id := "d_" + randomID()
	return &Server{opts: opts, id: id, started: time.Now(), hub: newHub(id, opts.Retain), uid: uid, log: opts.Logger}, nil
}

// DaemonID is this server's daemon identity.
func (s *Server) DaemonID() string { return s.id }

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Listen creates the data dir's control socket: the directory 0700, the
// socket 0600, a stale socket of a dead server replaced. Only one server
// per data dir may call it (aos up's singleton).
func Listen(dataDir string) (*net.UnixListener, error) {
	path := SocketPath(dataDir)
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("control: create socket dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("control: socket dir mode: %w", err)
	}
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return nil, errors.New("control: the socket path holds something that is not a socket")
		}
		_ = os.Remove(path)
	}
	// No umask around the bind: the umask is the whole process's, and
	// every file another goroutine created meanwhile got it too (a test's
	// 0755 executable came out 0600). Until the chmod below the socket has
	// the process umask's mode, inside a directory only its owner can enter.
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("control: listen: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control: socket mode: %w", err)
	}
	return ln, nil
}

// Serve accepts connections on ln until ctx ends, and publishes the
// journal's events from now on. It closes ln.
func (s *Server) Serve(ctx context.Context, ln *net.UnixListener) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	latest, err := s.opts.Service.LatestEventID(ctx)
	if err != nil {
		ln.Close()
		return fmt.Errorf("control: start the event stream: %w", err)
	}
	s.hub.start(latest)
	pumpDone := make(chan struct{})
	go func() {
		defer close(pumpDone)
		err := s.opts.Service.ListenEvents(ctx, latest, "", func(e mission.Event) error { s.hub.publish(e); return nil })
		if err != nil && ctx.Err() == nil {
			s.log.Error("control: event stream stopped", "err", err.Error())
			s.hub.fail() // no silent gap: every subscriber is cut and must resnapshot
		}
	}()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for {
		c, err := ln.AcceptUnix()
		if err != nil {
			cancel()
			s.conns.Wait()
			<-pumpDone
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("control: accept: %w", err)
		}
		s.conns.Add(1)
		go func() {
			defer s.conns.Done()
			s.serveConn(ctx, c)
		}()
	}
}

// peerUID is the connecting process's effective uid, from the kernel.
func peerUID(c *net.UnixConn) (uint32, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, cerr
	}
	return cred.Uid, nil
}

func (s *Server) serveConn(ctx context.Context, c *net.UnixConn) {
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	uid, err := peerUID(c)
	if err != nil || uid != s.uid {
		// Before anything is read: no frame of this peer is dispatched.
		s.sendError(c, "", errorf(CodePermissionDenied, "the control socket accepts only its owner's user"))
		return
	}
	for {
		_ = c.SetReadDeadline(time.Now().Add(idleTimeout))
		b, err := ReadFrame(c)
		if err != nil {
			var ce *Error
			if errors.As(err, &ce) {
				s.sendError(c, "", ce) // an oversized frame: the stream is lost, close
			}
			return
		}
		env, perr := DecodeEnvelope(b)
		if perr != nil {
			s.sendError(c, env.MessageID, perr)
			continue
		}
		if env.Kind != KindRequest {
			s.sendError(c, env.MessageID, errorf(CodeMalformedFrame, "a client sends only requests"))
			continue
		}
		if env.Operation == opSubscribe {
			s.subscribe(ctx, c, env)
			return
		}
		resp, rerr := s.dispatch(ctx, env)
		if rerr != nil {
			s.sendError(c, env.MessageID, rerr)
			continue
		}
		p, _ := json.Marshal(resp)
		if err := WriteFrame(c, Envelope{ProtocolVersion: ProtocolVersion, Kind: KindResponse, MessageID: "m_" + randomID(),
			CorrelationID: env.MessageID, Operation: env.Operation, Payload: p}); err != nil {
			return
		}
	}
}

func (s *Server) sendError(w io.Writer, corr string, e *Error) {
	p, _ := json.Marshal(e)
	_ = WriteFrame(w, Envelope{ProtocolVersion: ProtocolVersion, Kind: KindError, MessageID: "m_" + randomID(), CorrelationID: corr, Payload: p})
}

// marker is the current snapshot marker.
func (s *Server) marker() Marker { return s.hub.marker() }
