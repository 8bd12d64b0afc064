package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/auth"
	"github.com/aos-run/aos/internal/device"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// remote is a real server (api over mission over a kernel on a test
// database, served by httptest) and a client environment pointed at it.
type remote struct {
	t     *testing.T
	st    store.Store
	k     *kernel.Kernel
	svc   *mission.Service
	srv   *httptest.Server
	auth  *auth.Service
	clk   *testClock // the auth service's clock
	root  string     // the workspace root
	token string     // read+write
	read  string     // read only
	env   map[string]string
	cfg   string // the config dir
	// svcEnv is the server's environment (the mission service's Getenv);
	// startWorker points ANTHROPIC_BASE_URL at its scripted model server,
	// as aos up beside aos dev model-server would.
	svcEnv map[string]string
}

func setupRemote(t *testing.T, db storetest.DB) *remote {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	k := kernel.New(db.Store, kernel.Options{DataDir: t.TempDir(), Poll: 20 * time.Millisecond, EventPoll: 10 * time.Millisecond, Logger: log})
	r := &remote{t: t, st: db.Store, k: k, root: t.TempDir(), cfg: t.TempDir()}
	r.svcEnv = map[string]string{"ANTHROPIC_API_KEY": "sk-ant-FAKE-cli-test"}
	r.svc = mission.New(k, mission.Options{WorkspaceRoot: r.root, Version: "test", Getenv: func(k string) string { return r.svcEnv[k] }, Logger: log})
	r.srv = httptest.NewUnstartedServer(nil)
	_, port, _ := net.SplitHostPort(r.srv.Listener.Addr().String())
	r.clk = &testClock{t: time.Now()}
	a, err := auth.New(db.Store, auth.Options{PublicOrigin: "http://localhost:" + port, Key: bytes.Repeat([]byte{7}, 32), Now: r.clk.Now, Logger: log,
		Argon2: auth.Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1}}) // cheap parameters, as in internal/auth's tests
	if err != nil {
		t.Fatal(err)
	}
	r.auth = a
	r.srv.Config.Handler = api.New(r.svc, api.Options{Logger: log, Auth: a, Devices: device.New(db.Store, device.Options{Logger: log})})
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	ctx := context.Background()
	w, err := r.svc.CreateToken(ctx, "test", "writer", []string{"write"})
	if err != nil {
		t.Fatal(err)
	}
	rd, err := r.svc.CreateToken(ctx, "test", "reader", []string{"read"})
	if err != nil {
		t.Fatal(err)
	}
	r.token, r.read = w.Secret, rd.Secret
	r.env = map[string]string{"AOS_SERVER": r.srv.URL, "AOS_TOKEN": r.token}
	return r
}

// testClock is a settable clock for the auth service (TOTP steps, setup
// token expiry).
type testClock struct {
	mu sync.Mutex
	t  time.Time // guarded by mu
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// clientEnv returns the environment the commands see: r.env, the test's
// config dir, stdin, no terminal.
func (r *remote) clientEnv(stdin string) *clientEnv {
	env := make(map[string]string, len(r.env))
	for k, v := range r.env {
		env[k] = v
	}
	return &clientEnv{
		getenv:        func(k string) string { return env[k] },
		configDir:     func() (string, error) { return r.cfg, nil },
		hostname:      func() (string, error) { return "testhost", nil },
		stdin:         strings.NewReader(stdin),
		readSecret:    func() (string, error) { return "", io.EOF },
		followBackoff: 20 * time.Millisecond,
	}
}

// aos runs the command line and returns stdout, stderr and the exit code.
func (r *remote) aos(args ...string) (string, string, exitCode) {
	r.t.Helper()
	return runAOS(context.Background(), r.clientEnv(""), nil, args...)
}

// runAOS runs args on a fresh command tree over e; out, when given,
// receives stdout as it is written.
func runAOS(ctx context.Context, e *clientEnv, out io.Writer, args ...string) (string, string, exitCode) {
	cmd := newRootCmd("test", e)
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	var w io.Writer = stdout
	if out != nil {
		w = io.MultiWriter(stdout, out)
	}
	cmd.SetOut(w)
	cmd.SetErr(stderr)
	cmd.SetIn(e.stdin)
	cmd.SetArgs(args)
	code := execute(ctx, cmd, stderr)
	return stdout.String(), stderr.String(), code
}

// ok runs args and fails unless they exit 0.
func (r *remote) ok(args ...string) string {
	r.t.Helper()
	out, errOut, code := r.aos(args...)
	if code != 0 {
		r.t.Fatalf("aos %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
	}
	if strings.Contains(out+errOut, r.token) {
		r.t.Fatalf("aos %s printed the token", strings.Join(args, " "))
	}
	return out
}

// okJSON runs args (with --json) and decodes stdout into v, which must be
// exactly one JSON document.
func (r *remote) okJSON(v any, args ...string) {
	r.t.Helper()
	out := r.ok(append(args, "--json")...)
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(v); err != nil {
		r.t.Fatalf("aos %s --json: %v\n%s", strings.Join(args, " "), err, out)
	}
	if dec.More() {
		r.t.Fatalf("aos %s --json printed more than one document:\n%s", strings.Join(args, " "), out)
	}
}

// workspace makes a directory under the workspace root.
func (r *remote) workspace(name string) string {
	r.t.Helper()
	dir := filepath.Join(r.root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.t.Fatal(err)
	}
	return dir
}

// emit commits one event of a mission's run.
func (r *remote) emit(missionID, runID, kind string, payload any) {
	r.t.Helper()
	p, err := json.Marshal(payload)
	if err != nil {
		r.t.Fatal(err)
	}
	ctx := context.Background()
	if err := r.st.Tx(ctx, func(q store.Queries) error {
		_, err := q.InsertEvent(ctx, store.Event{MissionID: missionID, RunID: runID, Kind: kind, Payload: p, CreatedAt: time.Now().UnixMilli()})
		return err
	}); err != nil {
		r.t.Fatal(err)
	}
}

// waitFor polls cond until it holds, failing with last() at the deadline.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool, last func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last seen:\n%s", what, last())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// proxy forwards TCP connections to a backend and can cut them all, the
// way a network drop does (httptest's CloseClientConnections does not
// touch hijacked WebSocket connections).
type proxy struct {
	ln      net.Listener
	backend string
	mu      sync.Mutex
	conns   []net.Conn // guarded by mu
	drops   int        // guarded by mu
	wg      sync.WaitGroup
}

func startProxy(t *testing.T, backend string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, backend: backend}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() {
		_ = ln.Close()
		p.drop()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) URL() string { return "http://" + p.ln.Addr().String() }

func (p *proxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		b, err := net.Dial("tcp", p.backend)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, b)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(b, c); _ = b.Close() }()
		go func() { defer p.wg.Done(); _, _ = io.Copy(c, b); _ = c.Close() }()
	}
}

// drop closes every open connection; it returns how many there were.
func (p *proxy) drop() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.conns) / 2
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = nil
	p.drops++
	return n
}
