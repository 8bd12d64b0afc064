package clients_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/aos-run/aos/internal/clients"
)

// TestMain runs the two small client programs when re-exec'd as one
// (AOS_TEST_CLIENTS=1, the kind as the last argument: viewer or console). Each appends every line the daemon
// sends to $AOS_TEST_LOG (with its pid), says "ready", and obeys "crash"
// and, for the viewer, "ask-detail" (it asks the daemon to show a detail
// in the console).
func TestMain(m *testing.M) {
	if os.Getenv("AOS_TEST_CLIENTS") == "1" {
		clientMain(os.Args[len(os.Args)-1])
		return
	}
	goleak.VerifyTestMain(m)
}

func clientMain(kind string) {
	log, err := os.OpenFile(os.Getenv("AOS_TEST_LOG"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		os.Exit(9)
	}
	fmt.Fprintf(log, "%s %d start\n", kind, os.Getpid())
	fmt.Println("ready")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintf(log, "%s %d %s\n", kind, os.Getpid(), line)
		switch line {
		case "crash":
			os.Exit(3)
		case "ask-detail":
			fmt.Println(`detail console {"mission":"m1"}`)
		}
	}
	os.Exit(0)
}

type fixture struct {
	m   *clients.Manager
	log string
}

func setup(t *testing.T, restart string) *fixture {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "clients.log")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec := func(kind string, to ...string) clients.Spec {
		return clients.Spec{Kind: kind, Argv: []string{self, "-test.run=^$", kind}, Restart: restart, MaxRestarts: 2, DetailTo: to}
	}
	m, err := clients.New([]clients.Spec{spec("viewer", "console"), spec("console")}, clients.Options{
		Env: []string{"AOS_TEST_CLIENTS=1", "AOS_TEST_LOG=" + logPath}, StopGrace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return &fixture{m: m, log: logPath}
}

func (f *fixture) status(kind string) clients.Status {
	for _, s := range f.m.Status() {
		if s.Kind == kind {
			return s
		}
	}
	return clients.Status{}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (f *fixture) logLines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(f.log)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func (f *fixture) logHas(t *testing.T, s string) bool {
	return strings.Contains(strings.Join(f.logLines(t), "\n"), s)
}

// TestLifecycle: a start converges on the live process; a crash is
// restarted by policy (up to MaxRestarts, then it stays crashed); a stop
// is stopped for good; focus reaches only a connected client.
func TestLifecycle(t *testing.T) {
	t.Parallel()
	f := setup(t, clients.RestartOnCrash)
	st, err := f.m.Start("viewer")
	if err != nil {
		t.Fatal(err)
	}
	first := st.PID
	waitFor(t, "viewer connected", func() bool { return f.status("viewer").State == clients.StateConnected })
	again, err := f.m.Start("viewer")
	if err != nil || again.PID != first {
		t.Fatalf("duplicate start: pid %d (%v), want the live %d", again.PID, err, first)
	}
	if _, err := f.m.Focus("viewer"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "focus delivered", func() bool { return f.logHas(t, fmt.Sprintf("viewer %d focus", first)) })
	if _, err := f.m.Focus("console"); !errors.Is(err, &clients.Error{Code: clients.CodeInvalidState}) {
		t.Errorf("focus of a stopped client: %v", err)
	}
	// Crash: restarted, a new process.
	if err := f.crash(t, "viewer"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "viewer restarted", func() bool {
		s := f.status("viewer")
		return s.State == clients.StateConnected && s.PID != first && s.Restarts == 1
	})
	if s := f.status("viewer"); s.LastExit != "exit code 3" {
		t.Errorf("last exit %q", s.LastExit)
	}
	// Beyond MaxRestarts (2) it stays crashed.
	for i := 0; i < 2; i++ {
		if err := f.crash(t, "viewer"); err != nil {
			t.Fatal(err)
		}
		n := i + 2
		waitFor(t, "crash seen", func() bool {
			s := f.status("viewer")
			return (n <= 2 && s.Restarts == n && s.State == clients.StateConnected) || (n > 2 && s.State == clients.StateCrashed)
		})
	}
	if s := f.status("viewer"); s.State != clients.StateCrashed || s.PID != 0 {
		t.Fatalf("after MaxRestarts: %+v", s)
	}
	// Stop: stopped, and a start afterwards is a fresh one.
	if _, err := f.m.Start("console"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "console connected", func() bool { return f.status("console").State == clients.StateConnected })
	st, err = f.m.Stop("console")
	if err != nil || st.State != clients.StateStopped || st.PID != 0 {
		t.Fatalf("stop: %+v %v", st, err)
	}
	if s := f.status("console"); s.State != clients.StateStopped {
		t.Fatalf("a stopped client came back: %+v", s)
	}
	if _, err := f.m.Start("nope"); !errors.Is(err, &clients.Error{Code: clients.CodeUnknownKind}) {
		t.Errorf("unknown kind: %v", err)
	}
}

// crash tells the client of kind to exit with code 3 (through the
// manager's own pipe: the test plays the daemon's line protocol by asking
// the client to crash on its next focus).
func (f *fixture) crash(t *testing.T, kind string) error {
	t.Helper()
	return f.m.Send(kind, "crash")
}

// TestDetailRouting: the viewer's detail request is routed by the daemon
// to the console: started when stopped (and given the detail once
// connected), focused when running; the console may not route to the
// viewer (not declared); the viewer never talks to the console.
func TestDetailRouting(t *testing.T) {
	t.Parallel()
	f := setup(t, clients.RestartNever)
	if _, err := f.m.Start("viewer"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "viewer connected", func() bool { return f.status("viewer").State == clients.StateConnected })
	if err := f.m.Send("viewer", "ask-detail"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "console started and given the detail", func() bool { return f.logHas(t, `detail {"mission":"m1"}`) })
	console := f.status("console")
	if console.State != clients.StateConnected || console.PID == 0 {
		t.Fatalf("console %+v", console)
	}
	if !f.logHas(t, fmt.Sprintf("console %d focus", console.PID)) {
		t.Errorf("the console was not focused before the detail:\n%s", strings.Join(f.logLines(t), "\n"))
	}
	// Running: focused and given the detail, no second process.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := f.m.Detail(ctx, "viewer", "console", json.RawMessage(`{"mission": "m2"}`))
	if err != nil || st.PID != console.PID {
		t.Fatalf("detail to a running console: %+v %v", st, err)
	}
	waitFor(t, "second detail", func() bool { return f.logHas(t, fmt.Sprintf(`console %d detail {"mission":"m2"}`, console.PID)) })
	if _, err := f.m.Detail(ctx, "console", "viewer", json.RawMessage(`{}`)); !errors.Is(err, &clients.Error{Code: clients.CodeNotAllowed}) {
		t.Errorf("undeclared route: %v", err)
	}
	// Stopping a client stops only it.
	if _, err := f.m.Stop("viewer"); err != nil {
		t.Fatal(err)
	}
	if s := f.status("console"); s.State != clients.StateConnected || s.PID != console.PID {
		t.Errorf("stopping the viewer touched the console: %+v", s)
	}
	// Never policy: a crash stays crashed.
	if err := f.m.Send("console", "crash"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "console crashed", func() bool { return f.status("console").State == clients.StateCrashed })
	if s := f.status("console"); s.Restarts != 0 {
		t.Errorf("restarted under never: %+v", s)
	}
}

func TestSpecsValidated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		specs []clients.Spec
	}{
		{"relative program", []clients.Spec{{Kind: "a", Argv: []string{"viewer"}}}},
		{"bad kind", []clients.Spec{{Kind: "A B", Argv: []string{"/bin/true"}}}},
		{"duplicate", []clients.Spec{{Kind: "a", Argv: []string{"/bin/true"}}, {Kind: "a", Argv: []string{"/bin/true"}}}},
		{"bad restart", []clients.Spec{{Kind: "a", Argv: []string{"/bin/true"}, Restart: "always"}}},
		{"detail to unknown", []clients.Spec{{Kind: "a", Argv: []string{"/bin/true"}, DetailTo: []string{"b"}}}},
	} {
		if _, err := clients.New(tc.specs, clients.Options{}); !errors.Is(err, &clients.Error{Code: clients.CodeInvalid}) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
