package backend

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The engine's sandbox has its own empty network namespace (network none)
// and seccomp refuses it every unix socket it would create, so the proxy
// on the host's loopback is out of its reach. The forwarder bridges that
// gap without opening the network: it runs inside the sandbox as the
// engine's parent, listens on 127.0.0.1:ProxyPort in the sandbox's own
// namespace, and for each connection asks the host, over an inherited
// SOCK_SEQPACKET socket (ctlFD), for a fresh stream socket; the host
// creates a socketpair, serves the proxy on one end and passes the other
// back with SCM_RIGHTS. Receiving a descriptor creates no socket, so the
// seccomp filter stays as it is, and the engine can reach nothing but the
// proxy.

// ForwarderArg is the first argument that makes the aos binary (or a test
// binary) run the in-sandbox forwarder.
const ForwarderArg = "aos-backend-forward"

// ctlFD is the control socket's descriptor inside the sandbox: bwrap gets
// the seccomp filter on 3 and its status pipe on 4, then Spec.ExtraFiles.
const ctlFD = 5

// ctlServer is the host half: a net.Listener of the streams handed out.
type ctlServer struct {
	ctl      *net.UnixConn
	childEnd *os.File
	conns    chan net.Conn
	closed   chan struct{}
	once     sync.Once
}

func newCtlServer() (*ctlServer, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("backend: proxy control socket: %w", err)
	}
	parent := os.NewFile(uintptr(fds[0]), "aos-proxy-ctl")
	defer parent.Close()
	c, err := net.FileConn(parent)
	if err != nil {
		_ = unix.Close(fds[1])
		return nil, fmt.Errorf("backend: proxy control socket: %w", err)
	}
	s := &ctlServer{ctl: c.(*net.UnixConn), childEnd: os.NewFile(uintptr(fds[1]), "aos-proxy-ctl-child"),
		conns: make(chan net.Conn), closed: make(chan struct{})}
	go s.loop()
	return s, nil
}

// loop answers each request byte with a new stream socket.
func (s *ctlServer) loop() {
	buf := make([]byte, 16)
	for {
		if _, err := s.ctl.Read(buf); err != nil {
			return
		}
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return
		}
		_, _, err = s.ctl.WriteMsgUnix([]byte{1}, unix.UnixRights(fds[1]), nil)
		_ = unix.Close(fds[1])
		f := os.NewFile(uintptr(fds[0]), "aos-proxy-conn")
		c, cerr := net.FileConn(f)
		_ = f.Close()
		if err != nil || cerr != nil {
			if c != nil {
				_ = c.Close()
			}
			continue
		}
		select {
		case s.conns <- c:
		case <-s.closed:
			_ = c.Close()
			return
		}
	}
}

// Accept returns the next stream an engine connection asked for.
func (s *ctlServer) Accept() (net.Conn, error) {
	select {
	case c := <-s.conns:
		return c, nil
	case <-s.closed:
		return nil, net.ErrClosed
	}
}

// Close stops handing out streams.
func (s *ctlServer) Close() error {
	s.once.Do(func() {
		close(s.closed)
		_ = s.ctl.Close()
		_ = s.childEnd.Close()
	})
	return nil
}

// Addr is a placeholder: the listener has no address of its own.
func (s *ctlServer) Addr() net.Addr { return &net.UnixAddr{Name: "aos-proxy", Net: "unix"} }

// ForwarderMain is the in-sandbox half. Its arguments: the control
// socket's descriptor, then the launcher's (request file, result file,
// stderr file, KEY=VALUE…, "--", engine argv). It returns the engine's
// exit code.
func ForwarderMain(args []string) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, "aos forwarder: "+format+"\n", a...)
		return 125
	}
	if len(args) < 6 {
		return fail("too few arguments")
	}
	fd, err := strconv.Atoi(args[0])
	if err != nil {
		return fail("bad control descriptor")
	}
	reqPath, outPath, errPath := args[1], args[2], args[3]
	rest := args[4:]
	var env []string
	i := 0
	for ; i < len(rest) && rest[i] != "--"; i++ {
		env = append(env, rest[i])
	}
	if i+1 >= len(rest) {
		return fail("no engine command")
	}
	argv := rest[i+1:]
	cf := os.NewFile(uintptr(fd), "ctl")
	c, err := net.FileConn(cf)
	_ = cf.Close()
	if err != nil {
		return fail("control socket: %v", err)
	}
	ctl := c.(*net.UnixConn)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ProxyPort))
	if err != nil {
		return fail("listen: %v", err)
	}
	stdin, err := os.Open(reqPath)
	if err != nil {
		return fail("request: %v", err)
	}
	stdout, err := os.OpenFile(outPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fail("result: %v", err)
	}
	stderr, err := os.OpenFile(errPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fail("stderr: %v", err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		return fail("start engine: %v", err)
	}
	var mu sync.Mutex // serializes control requests and their answers
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			up, err := dialHost(ctl)
			mu.Unlock()
			if err != nil {
				_ = conn.Close()
				continue
			}
			go pipe(conn, up)
		}
	}()
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return fail("engine: %v", err)
	}
	return 0
}

// dialHost asks the host for a stream to the proxy.
func dialHost(ctl *net.UnixConn) (net.Conn, error) {
	if _, err := ctl.Write([]byte{1}); err != nil {
		return nil, err
	}
	buf, oob := make([]byte, 16), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := ctl.ReadMsgUnix(buf, oob)
	if err != nil {
		return nil, err
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("no descriptor")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return nil, errors.New("no descriptor")
	}
	f := os.NewFile(uintptr(fds[0]), "proxy")
	defer f.Close()
	return net.FileConn(f)
}

// pipe copies both ways until either side ends.
func pipe(a, b net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	cp := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}
	go cp(a, b)
	go cp(b, a)
	wg.Wait()
	_ = a.Close()
	_ = b.Close()
}
