package clients

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Options configure a Manager.
type Options struct {
	// Env is the clients' environment (the daemon passes what they need:
	// PATH, HOME, DISPLAY, …); nil is an empty one.
	Env []string
	// Logger gets lifecycle events; nil discards them.
	Logger *slog.Logger
	// StopGrace is how long a stopped client has between SIGTERM and
	// SIGKILL (default 2 s).
	StopGrace time.Duration
}

// Manager owns the client processes of one daemon.
type Manager struct {
	opts   Options
	ctx    context.Context // cancelled by Close: no more restarts
	cancel context.CancelFunc
	wg     sync.WaitGroup // watchers and pending restarts

	mu      sync.Mutex // guards clients, closed and every client's fields
	clients map[string]*client
	closed  bool
}

type client struct {
	spec      Spec
	st        Status
	p         *proc
	gen       int           // bumped by every start and stop: a pending restart of an older gen is void
	connected chan struct{} // closed when the current process says ready
}

type proc struct {
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	done     chan struct{} // closed once the process is reaped
	stopping bool
}

// New returns a Manager of specs; nothing is started.
func New(specs []Spec, o Options) (*Manager, error) {
	byKind, err := validate(specs)
	if err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.StopGrace <= 0 {
		o.StopGrace = 2 * time.Second
	}
	m := &Manager{opts: o, clients: map[string]*client{}}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for k, s := range byKind {
		m.clients[k] = &client{spec: s, st: Status{Kind: k, State: StateStopped}}
	}
	return m, nil
}

func (m *Manager) get(kind string) (*client, error) {
	c, ok := m.clients[kind]
	if !ok {
		return nil, &Error{Code: CodeUnknownKind, Msg: fmt.Sprintf("no client of kind %q is declared", kind)}
	}
	return c, nil
}

// Status returns every client's status, by kind.
func (m *Manager) Status() []Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Status, 0, len(m.clients))
	for _, c := range m.clients {
		out = append(out, c.st)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// Start starts the client of kind. A client already running converges:
// its status is returned and no second process is made.
func (m *Manager) Start(kind string) (Status, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.get(kind)
	if err != nil {
		return Status{}, err
	}
	if c.p != nil {
		return c.st, nil
	}
	if m.closed {
		return c.st, &Error{Code: CodeInvalidState, Msg: "the daemon is stopping"}
	}
	c.st.Restarts = 0
	return c.st, m.spawn(c)
}

// spawn starts c's process. m.mu is held.
func (m *Manager) spawn(c *client) error {
	cmd := exec.Command(c.spec.Argv[0], c.spec.Argv[1:]...)
	cmd.Env = m.opts.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("clients: start %s: %w", c.spec.Kind, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("clients: start %s: %w", c.spec.Kind, err)
	}
	if err := cmd.Start(); err != nil {
		c.st.State, c.st.LastExit = StateCrashed, "did not start: "+err.Error()
		return fmt.Errorf("clients: start %s: %w", c.spec.Kind, err)
	}
	p := &proc{cmd: cmd, stdin: stdin, done: make(chan struct{})}
	c.gen++
	c.p, c.connected = p, make(chan struct{})
	c.st.State, c.st.PID = StateStarting, cmd.Process.Pid
	m.opts.Logger.Info("client started", "kind", c.spec.Kind, "pid", c.st.PID)
	m.wg.Add(1)
	go m.watch(c, p, c.connected, stdout)
	return nil
}

// watch reads the client's lines until it exits, then records the exit
// and restarts it by policy.
func (m *Manager) watch(c *client, p *proc, connected chan struct{}, stdout io.Reader) {
	defer m.wg.Done()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	ready := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "ready" && !ready:
			ready = true
			m.mu.Lock()
			if c.p == p {
				c.st.State = StateConnected
			}
			m.mu.Unlock()
			close(connected)
		case strings.HasPrefix(line, "detail "):
			kind, detail, _ := strings.Cut(strings.TrimPrefix(line, "detail "), " ")
			ctx, cancel := context.WithTimeout(m.ctx, 10*time.Second)
			if _, err := m.Detail(ctx, c.spec.Kind, kind, json.RawMessage(detail)); err != nil {
				m.opts.Logger.Warn("client detail not routed", "from", c.spec.Kind, "to", kind, "err", err.Error())
			}
			cancel()
		}
	}
	_, _ = io.Copy(io.Discard, stdout)
	err := p.cmd.Wait()
	close(p.done)
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.p != p {
		return
	}
	c.p, c.st.PID, c.st.LastExit = nil, 0, describeExit(err)
	if p.stopping {
		c.st.State = StateStopped
		return
	}
	c.st.State = StateCrashed
	m.opts.Logger.Warn("client exited", "kind", c.spec.Kind, "exit", c.st.LastExit)
	if c.spec.Restart != RestartOnCrash || c.st.Restarts >= c.spec.MaxRestarts || m.closed {
		return
	}
	c.st.Restarts++
	gen, wait := c.gen, backoff(c.st.Restarts)
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-m.ctx.Done():
			return
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		if c.gen == gen && c.p == nil && c.st.State == StateCrashed && !m.closed {
			if err := m.spawn(c); err != nil {
				m.opts.Logger.Warn("client restart failed", "kind", c.spec.Kind, "err", err.Error())
			}
		}
	}()
}

func describeExit(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "signal " + ws.Signal().String()
		}
		return fmt.Sprintf("exit code %d", ee.ExitCode())
	}
	if err != nil {
		return err.Error()
	}
	return "exit code 0"
}

// Stop stops the client of kind (SIGTERM to its process group, SIGKILL
// after StopGrace) and cancels any pending restart. Stopping a client
// never stops the daemon.
func (m *Manager) Stop(kind string) (Status, error) {
	m.mu.Lock()
	c, err := m.get(kind)
	if err != nil {
		m.mu.Unlock()
		return Status{}, err
	}
	c.gen++
	p := c.p
	if p == nil {
		c.st.State = StateStopped
		st := c.st
		m.mu.Unlock()
		return st, nil
	}
	p.stopping = true
	m.mu.Unlock()
	m.kill(p)
	m.mu.Lock()
	defer m.mu.Unlock()
	return c.st, nil
}

// kill ends p's process group and waits until p is reaped.
func (m *Manager) kill(p *proc) {
	_ = p.stdin.Close()
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	t := time.NewTimer(m.opts.StopGrace)
	defer t.Stop()
	select {
	case <-p.done:
		return
	case <-t.C:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// Focus asks the connected client of kind to come to the front.
func (m *Manager) Focus(kind string) (Status, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.get(kind)
	if err != nil {
		return Status{}, err
	}
	if c.st.State != StateConnected {
		return c.st, &Error{Code: CodeInvalidState, Msg: fmt.Sprintf("client %s is %s, not connected", kind, c.st.State)}
	}
	return c.st, m.send(c, "focus\n")
}

// send writes line to c's stdin. m.mu is held.
func (m *Manager) send(c *client, line string) error {
	if _, err := io.WriteString(c.p.stdin, line); err != nil {
		return fmt.Errorf("clients: write to %s: %w", c.spec.Kind, err)
	}
	return nil
}

// Detail routes a detail request from a client of kind from to the client
// of kind to, which from's spec must list in DetailTo: the daemon starts
// to if it is not running (and waits until it is connected, within ctx)
// or focuses it, then hands it the detail. The clients never talk to each
// other.
func (m *Manager) Detail(ctx context.Context, from, to string, detail json.RawMessage) (Status, error) {
	var buf bytes.Buffer
	if len(detail) > 64<<10 || json.Compact(&buf, detail) != nil {
		return Status{}, &Error{Code: CodeInvalid, Msg: "a detail is one JSON value of at most 64 KiB"}
	}
	m.mu.Lock()
	src, err := m.get(from)
	if err == nil {
		_, err = m.get(to)
	}
	if err != nil {
		m.mu.Unlock()
		return Status{}, err
	}
	if !slices.Contains(src.spec.DetailTo, to) {
		m.mu.Unlock()
		return Status{}, &Error{Code: CodeNotAllowed, Msg: fmt.Sprintf("client %s may not route details to %s", from, to)}
	}
	c := m.clients[to]
	if c.p == nil {
		if m.closed {
			m.mu.Unlock()
			return c.st, &Error{Code: CodeInvalidState, Msg: "the daemon is stopping"}
		}
		c.st.Restarts = 0
		if err := m.spawn(c); err != nil {
			m.mu.Unlock()
			return c.st, err
		}
	}
	connected := c.connected
	m.mu.Unlock()
	select {
	case <-connected:
	case <-ctx.Done():
		return m.status(to), &Error{Code: CodeInvalidState, Msg: fmt.Sprintf("client %s did not connect: %v", to, ctx.Err())}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if c.p == nil || c.st.State != StateConnected {
		return c.st, &Error{Code: CodeInvalidState, Msg: fmt.Sprintf("client %s is %s", to, c.st.State)}
	}
	if err := m.send(c, "focus\n"); err != nil {
		return c.st, err
	}
	return c.st, m.send(c, "detail "+buf.String()+"\n")
}

func (m *Manager) status(kind string) Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.clients[kind].st
}

// Close stops every client and waits for the watchers; no restart
// happens after it.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	m.cancel()
	var live []*proc
	for _, c := range m.clients {
		c.gen++
		if c.p != nil {
			c.p.stopping = true
			live = append(live, c.p)
		}
	}
	m.mu.Unlock()
	for _, p := range live {
		m.kill(p)
	}
	m.wg.Wait()
}

// Send writes one command line to the connected client of kind: the
// daemon's own channel to it (focus and detail are two such commands).
func (m *Manager) Send(kind, line string) error {
	if line == "" || strings.ContainsAny(line, "\r\n") || len(line) > 64<<10 {
		return &Error{Code: CodeInvalid, Msg: "a command is one non-empty line of at most 64 KiB"}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.get(kind)
	if err != nil {
		return err
	}
	if c.p == nil || c.st.State != StateConnected {
		return &Error{Code: CodeInvalidState, Msg: fmt.Sprintf("client %s is %s, not connected", kind, c.st.State)}
	}
	return m.send(c, line+"\n")
}
