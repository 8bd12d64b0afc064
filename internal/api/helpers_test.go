package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/aos-run/aos/internal/agent"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/auth"
	"github.com/aos-run/aos/internal/device"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestMain(m *testing.M) {
	// The sandbox's admission probe re-executes this binary.
	if len(os.Args) > 2 && os.Args[1] == "sandbox" && os.Args[2] == "probe-child" {
		os.Exit(sandbox.ProbeChildMain(os.Args[3:]))
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.InitArg { // the warm sandbox's init
		os.Exit(sandbox.InitMain(os.Args[2:]))
	}
	goleak.VerifyTestMain(m)
}

// Fake provider keys: set in the service's environment, and never to be
// seen in any response body or event frame.
const (
	fakeAnthropicKey = "sk-ant-FAKE-do-not-leak-0123456789abcdef"
	fakeOpenAIKey    = "sk-proj-FAKE-do-not-leak-fedcba9876543210"
)

type bundle struct {
	t       testing.TB
	st      store.Store
	k       *kernel.Kernel
	svc     *mission.Service
	api     *api.Server
	srv     *httptest.Server
	root    string // the workspace root
	write   string // a read+write token
	read    string // a read-only token
	mu      sync.Mutex
	bodies  [][]byte    // every response body and event frame, scanned at cleanup
	logs    *syncBuffer // every log line of the service, API and kernel, scanned too
	dialect string
	auth    *auth.Service
	clk     *testClock // the auth service's clock
	origin  string     // the public origin (http://localhost:<port>)
	secrets []string   // more secrets no body, frame or log may hold (guarded by mu)
	// exchanges are every API request and response (guarded by mu),
	// validated at cleanup against spec, the published OpenAPI document.
	exchanges []exchange
	spec      []byte
}

type setupOpts struct {
	api    api.Options
	env    map[string]string // added to (or, with "", removed from) the service's environment
	tls    bool              // serve over TLS
	gitEnv []string          // mission.Options.GitEnv
	clone  time.Duration     // mission.Options.CloneTimeout
	// publicOnly refuses clones from private addresses (the default in
	// production; tests' git servers listen on loopback).
	publicOnly bool
	lookup     func(ctx context.Context, host string) ([]netip.Addr, error)
}

// testClock is a settable clock for the auth service.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *testClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// secret adds secrets the cleanup scan looks for.
func (b *bundle) secret(s ...string) {
	b.mu.Lock()
	b.secrets = append(b.secrets, s...)
	b.mu.Unlock()
}

func setup(t testing.TB, db storetest.DB, o ...setupOpts) *bundle {
	t.Helper()
	var opts setupOpts
	if len(o) > 0 {
		opts = o[0]
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	k := kernel.New(db.Store, kernel.Options{DataDir: t.TempDir(), Poll: 20 * time.Millisecond, EventPoll: 20 * time.Millisecond, Logger: log})
	env := map[string]string{"ANTHROPIC_API_KEY": fakeAnthropicKey, "OPENAI_API_KEY": fakeOpenAIKey}
	for k, v := range opts.env {
		env[k] = v
	}
	b := &bundle{t: t, st: db.Store, k: k, root: t.TempDir(), dialect: db.Driver, logs: logs}
	b.svc = mission.New(k, mission.Options{WorkspaceRoot: b.root, Version: "test", Getenv: func(k string) string { return env[k] }, Logger: log,
		GitEnv: opts.gitEnv, CloneTimeout: opts.clone, AllowPrivateClones: !opts.publicOnly, LookupHost: opts.lookup})
	opts.api.Logger = log
	b.srv = httptest.NewUnstartedServer(nil)
	_, port, _ := net.SplitHostPort(b.srv.Listener.Addr().String())
	scheme := "http"
	if opts.tls {
		scheme = "https"
	}
	b.origin = scheme + "://localhost:" + port
	b.clk = &testClock{t: time.Now()}
	a, err := auth.New(db.Store, auth.Options{PublicOrigin: b.origin, Key: bytes.Repeat([]byte{9}, 32), Now: b.clk.Now, Logger: log,
		Argon2: auth.Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1}})
	if err != nil {
		t.Fatal(err)
	}
	b.auth, opts.api.Auth = a, a
	if opts.api.Agents == nil {
		ag, err := agent.New(agent.Options{Store: db.Store, Missions: b.svc, WorkspaceRoot: b.root, DataDir: t.TempDir(), Getenv: os.Getenv, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		actx, cancel := context.WithCancel(context.Background())
		if err := ag.Start(actx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cancel(); ag.Wait() })
		opts.api.Agents = ag
	}
	if opts.api.Devices == nil {
		opts.api.Devices = device.New(db.Store, device.Options{Ops: opts.api.Agents, Now: b.clk.Now, Logger: log})
	}
	b.api = api.New(b.svc, opts.api)
	b.srv.Config.Handler = b.specRecorder(b.api)
	t.Cleanup(b.validateExchanges) // after the server has closed
	if opts.tls {
		b.srv.StartTLS()
	} else {
		b.srv.Start()
	}
	t.Cleanup(b.srv.Close)
	t.Cleanup(b.scanForSecrets)
	ctx := context.Background()
	w, err := b.svc.CreateToken(ctx, "test", "writer", []string{"write"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.svc.CreateToken(ctx, "test", "reader", []string{"read"})
	if err != nil {
		t.Fatal(err)
	}
	b.write, b.read = w.Secret, r.Secret
	b.fetchSpec()
	return b
}

// scanForSecrets fails the test if any response or frame held a key.
func (b *bundle) scanForSecrets() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, body := range append(b.bodies, []byte(b.logs.String())) {
		for _, k := range append([]string{fakeAnthropicKey, fakeOpenAIKey, b.write, b.read}, b.secrets...) {
			if bytes.Contains(body, []byte(k)) {
				b.t.Errorf("a response, frame or log line leaked a secret: %.200s", body)
			}
		}
	}
	if _, fuzzing := b.t.(*testing.F); len(b.bodies) == 0 && !fuzzing {
		b.t.Errorf("no response was scanned")
	}
}

func (b *bundle) record(body []byte) {
	b.mu.Lock()
	b.bodies = append(b.bodies, body)
	b.mu.Unlock()
}

// do sends a request with token (none when ""), and returns the status and
// body.
func (b *bundle) do(method, path string, body any, token string) (int, []byte) {
	b.t.Helper()
	var hdr http.Header
	if token != "" {
		hdr = http.Header{"Authorization": {"Bearer " + token}}
	}
	resp, out := b.send(method, path, body, hdr, true)
	return resp.StatusCode, out
}

// ok sends a request with the write token and decodes a 2xx body into v.
func (b *bundle) ok(method, path string, body, v any) {
	b.t.Helper()
	status, out := b.do(method, path, body, b.write)
	if status/100 != 2 {
		b.t.Fatalf("%s %s: %d %s", method, path, status, out)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			b.t.Fatalf("%s %s: decode %s: %v", method, path, out, err)
		}
	}
}

// fails sends a request with the write token and checks the error status
// and code.
func (b *bundle) fails(method, path string, body any, status int, code string) {
	b.t.Helper()
	got, out := b.do(method, path, body, b.write)
	var e struct {
		Error struct{ Code, Message string }
	}
	_ = json.Unmarshal(out, &e)
	if got != status || e.Error.Code != code {
		b.t.Fatalf("%s %s: got %d %q (%s), want %d %q", method, path, got, e.Error.Code, out, status, code)
	}
}

// workspace makes a directory under the workspace root.
func (b *bundle) workspace(name string) string {
	b.t.Helper()
	dir := b.root + "/" + name
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	return dir
}

// createMission creates a mission in a fresh workspace.
func (b *bundle) createMission() mission.Mission {
	b.t.Helper()
	var m mission.Mission
	b.ok("POST", "/missions", map[string]any{"objective": "fix the test", "workspace": b.workspace("p"), "model": "claude-opus-5-5"}, &m)
	return m
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func httptestServer(h http.Handler) *httptest.Server { return httptest.NewServer(h) }

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
