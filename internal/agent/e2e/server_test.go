// Package e2e drives the agent service through the real aos binary: aos
// server processes killed with SIGKILL mid-preparation, and the CLI.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store/storeopen"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/testbin"
)

// aos is the binary the tests run, built once per test process.
var aos = testbin.New("github.com/aos-run/aos/cmd/aos", "aos", "aos-agent-e2e-")

// TestMain removes the binary the tests built (78 MB under TMPDIR each
// run otherwise).
func TestMain(m *testing.M) {
	code := m.Run()
	aos.Remove()
	os.Exit(code)
}

// binary builds the aos binary once per test process.
func binary(t *testing.T) string {
	t.Helper()
	return aos.Path(t)
}

type machine struct {
	t      *testing.T
	bin    string
	env    []string
	addr   string
	token  string
	root   string // workspace root
	pkgs   string
	server *exec.Cmd
	logs   *bytes.Buffer
}

func newMachine(t *testing.T, driver string) *machine {
	base, err := os.MkdirTemp("", "aosag-") // short: the sandbox binds sockets under TMPDIR
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	m := &machine{t: t, bin: binary(t), root: filepath.Join(base, "ws"), pkgs: filepath.Join(base, "pkgs")}
	for _, d := range []string{m.root, m.pkgs, filepath.Join(base, "home"), filepath.Join(base, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(base, "home"), "TMPDIR=" + filepath.Join(base, "tmp"),
		"AOS_DATA_DIR=" + filepath.Join(base, "data"), "AOS_WORKSPACE_ROOT=" + m.root, "AOS_LOG_LEVEL=warn",
		"ANTHROPIC_API_KEY=sk-ant-e2e-canary"}
	if driver == "postgres" {
		db := storetest.New(t, "postgres")
		_ = db.Store.Close()
		m.env = append(m.env, "AOS_DATABASE_URL="+db.DSN)
	}
	m.aos(nil, "migrate")
	m.aos(nil, "settings", "set", "--default-model", "script:test")
	m.token = strings.TrimSpace(m.aos(nil, "token", "create", "--name", "e2e"))
	return m
}

// aos runs the binary to completion and returns its stdout; it fails the
// test on a non-zero exit.
func (m *machine) aos(extra []string, args ...string) string {
	m.t.Helper()
	out, code := m.aosCode(extra, args...)
	if code != 0 {
		m.t.Fatalf("aos %v: exit %d\n%s", args, code, out)
	}
	return out
}

func (m *machine) aosCode(extra []string, args ...string) (string, int) {
	cmd := exec.Command(m.bin, args...)
	cmd.Env = append(append(append([]string{}, m.env...), extra...), "AOS_SERVER=http://"+m.addr, "AOS_TOKEN="+m.token)
	var out, errb bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		m.t.Fatal(err)
	}
	if code != 0 {
		return out.String() + errb.String(), code
	}
	return out.String(), code
}

// start runs aos server with extra environment and waits for its banner.
func (m *machine) start(extra ...string) {
	m.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		m.t.Fatal(err)
	}
	m.addr = ln.Addr().String()
	_ = ln.Close()
	cmd := exec.Command(m.bin, "server", "--no-setup-token")
	cmd.Env = append(append(append([]string{}, m.env...), extra...), "AOS_ADDR="+m.addr)
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	m.logs = &bytes.Buffer{}
	cmd.Stderr = m.logs
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.server = cmd
	m.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "API on") {
				close(ready)
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		m.t.Fatalf("aos server did not start: %s", m.logs)
	}
}

// kill SIGKILLs the server and waits for it.
func (m *machine) kill() {
	_ = m.server.Process.Signal(syscall.SIGKILL)
	_ = m.server.Wait()
}

func (m *machine) call(method, path string, in, out any) int {
	m.t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+m.addr+"/api/v1"+path, body)
	req.Header.Set("Authorization", "Bearer "+m.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			m.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
	}
	return resp.StatusCode
}

func (m *machine) op(id string) agent.Operation {
	m.t.Helper()
	var o agent.Operation
	if st := m.call("GET", "/operations/"+id, nil, &o); st != 200 {
		m.t.Fatalf("GET operation: %d %s", st, js(o))
	}
	return o
}

// shortLease makes a killed server's operations recoverable after 1 s
// (its leases are not released: it was killed).
const shortLease = "AOS_AGENT_LEASE=1s"

// settled polls an operation until it is neither accepted nor running: a
// restarted server recovers a killed one's operations once their lease
// expires.
func (m *machine) settled(id string) agent.Operation {
	m.t.Helper()
	var o agent.Operation
	waitFor(m.t, 30*time.Second, "operation "+id+" to settle", func() bool {
		o = m.op(id)
		return o.State != agent.StateAccepted && o.State != agent.StateRunning
	}, func() string { return js(o) })
	return o
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool, last func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last seen: %s", what, last())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func countLines(p string) int {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

// TestServerKilledMidPreparation: aos server is SIGKILLed while a package's
// setup is blocked on a fifo. The restarted server answers the operation
// needs_user_action / RECOVERY_REQUIRED and replays nothing (the setup ran
// once, counted in a file); the interrupted install is broken, never
// retried. A second preparation's last updates are lost after its creation
// receipt: after restart it recovers the same agent, ready, without
// creating another; a turn sent to it twice becomes one mission.
func TestServerKilledMidPreparation(t *testing.T) {
	t.Parallel()
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			if driver == "postgres" && os.Getenv("AOS_TEST_POSTGRES_URL") == "" {
				t.Skip("AOS_TEST_POSTGRES_URL unset")
			}
			m := newMachine(t, driver)
			count, fifo := filepath.Join(m.pkgs, "setup.count"), filepath.Join(m.pkgs, "setup.fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(m.pkgs, "slow")
			_ = os.MkdirAll(dir, 0o755)
			mustWrite(t, filepath.Join(dir, "aos-package.json"), `{"packageId":"fix/slow","name":"Slow","description":"blocks in setup","category":"test","engine":"builtin","viewerPackageId":null,"version":"1","setup":"setup.sh"}`)
			mustWrite(t, filepath.Join(dir, "setup.sh"), "echo setup >> "+count+"\ncat "+fifo+" >/dev/null\n")
			m.aos(nil, "package", "add", dir)
			m.aos(nil, "package", "review", "fix/slow")

			m.start(shortLease)
			var ls agent.StoreListResult
			m.call("GET", "/store/packages?query=slow", nil, &ls)
			if len(ls.Packages) != 1 || !ls.Packages[0].InstallAllowed {
				t.Fatalf("store.list = %s", js(ls))
			}
			req := agent.PrepareRequest{MachineID: ls.MachineID, PackageID: "fix/slow", IdempotencyKey: "kill-1", Workspace: agent.Workspace{Kind: "new", Name: "slow"}}
			var res agent.PrepareResult
			if st := m.call("POST", "/agents/prepare", req, &res); st != 200 || res.Status != "accepted" {
				t.Fatalf("prepare: %d %s", st, js(res))
			}
			waitFor(t, 30*time.Second, "setup to block", func() bool { return countLines(count) == 1 }, func() string { return js(m.op(res.Operation.OperationID)) })
			m.kill()
			// The orphaned setup still waits on the fifo: let it end, so
			// that any replay would show as a second line.
			release(t, fifo)
			m.start(shortLease)
			o := m.settled(res.Operation.OperationID)
			if o.State != agent.StateNeedsUserAction || o.Error == nil || o.Error.Code != agent.CodeRecoveryRequired || o.AgentID != nil {
				t.Fatalf("after restart: %s", js(o))
			}
			var again agent.PrepareResult
			if st := m.call("POST", "/agents/prepare", req, &again); st != 200 || again.Status != "duplicate" || again.Operation.OperationID != o.OperationID {
				t.Fatalf("retry the same key: %d %s", st, js(again))
			}
			var p agent.StoreInspectResult
			waitFor(t, 30*time.Second, "the interrupted install to be broken", func() bool {
				m.call("GET", "/store/packages/fix/slow", nil, &p)
				return p.Package.Installation == agent.InstallBroken
			}, func() string { return js(p.Package) })
			if _, err := os.Stat(filepath.Join(m.root, "slow")); err == nil {
				t.Fatal("a workspace was made")
			}
			if n := countLines(count); n != 1 {
				t.Fatalf("setup ran %d times", n)
			}
			// The same key with other parameters: the seed's code, with
			// guidance, and no operation.
			var conflict struct {
				Error struct{ Code, Message, Guidance string }
			}
			other := req
			other.Workspace.Name = "other"
			if st := m.call("POST", "/agents/prepare", other, &conflict); st != 409 || conflict.Error.Code != agent.CodeIdempotencyConflict || conflict.Error.Guidance == "" {
				t.Fatalf("conflicting key: %d %+v", st, conflict)
			}
			// An unknown field is refused (strict schema), with the seed's
			// error shape.
			var bad map[string]any
			if st := m.call("POST", "/agents/prepare", map[string]any{"machineId": ls.MachineID, "packageId": "aos/docs-writer", "idempotencyKey": "x", "workspace": map[string]any{"kind": "new"}, "text": "draw"}, &bad); st != 400 {
				t.Fatalf("unknown field: %d %v", st, bad)
			}
			m.kill()

			// Second part: a preparation of an official package completes;
			// the server is killed and its last operation updates are
			// rolled back in the database, as if they were lost (the
			// creation receipt, the agent row, stays). The restarted server
			// recovers the agent from the receipt, rechecks it and makes
			// the operation ready without creating another.
			srv := scripttest.Start(t, "name: test\nturns:\n  - text: ok\n")
			m.start("ANTHROPIC_BASE_URL="+srv.URL(), shortLease)
			req2 := agent.PrepareRequest{MachineID: ls.MachineID, PackageID: "aos/docs-writer", IdempotencyKey: "kill-2", Workspace: agent.Workspace{Kind: "new", Name: "docs"}}
			if st := m.call("POST", "/agents/prepare", req2, &res); st != 200 {
				t.Fatalf("prepare 2: %d %s", st, js(res))
			}
			var before agent.Operation
			waitFor(t, 60*time.Second, "ready", func() bool {
				before = m.op(res.Operation.OperationID)
				return before.State == agent.StateReady
			}, func() string { return js(before) })
			m.kill()
			m.loseUpdates(res.Operation.OperationID)
			m.start("ANTHROPIC_BASE_URL="+srv.URL(), shortLease)
			after := m.settled(res.Operation.OperationID)
			if after.State != agent.StateReady || after.AgentID == nil || *after.AgentID != *before.AgentID {
				t.Fatalf("after restart: %s (before %s)", js(after), js(before))
			}
			var ags []agent.Agent
			m.call("GET", "/agents", nil, &ags)
			if len(ags) != 1 || ags[0].Runtime != agent.RuntimeReady {
				t.Fatalf("agents = %s", js(ags))
			}
			// A turn through the CLI, twice: one receipt, one mission.
			out1 := m.aos(nil, "agent", "send", *after.AgentID, "Write the backup guide.", "--key", "task-1", "--json")
			out2 := m.aos(nil, "agent", "send", *after.AgentID, "Write the backup guide.", "--key", "task-1", "--json")
			var r1, r2 agent.Receipt
			_ = json.Unmarshal([]byte(out1), &r1)
			_ = json.Unmarshal([]byte(out2), &r2)
			if r1.MissionID == "" || r1.ReceiptID != r2.ReceiptID || r2.MissionID != r1.MissionID || !r2.Duplicate {
				t.Fatalf("sends: %s / %s", out1, out2)
			}
			if out, code := m.aosCode(nil, "operation", "get", o.OperationID); code != 8 || !strings.Contains(out, "RECOVERY_REQUIRED") {
				t.Fatalf("aos operation get of the recovered operation: exit %d\n%s", code, out)
			}
		})
	}
}

// loseUpdates rolls an operation back to its create phase without its
// agent id, directly in the database, as a crash that lost the updates
// after the creation receipt would leave it.
func (m *machine) loseUpdates(id string) {
	m.t.Helper()
	dsn := ""
	for _, e := range m.env {
		if v, ok := strings.CutPrefix(e, "AOS_DATABASE_URL="); ok {
			dsn = v
		}
		if v, ok := strings.CutPrefix(e, "AOS_DATA_DIR="); ok && dsn == "" {
			dsn = storeopen.DSN("", v)
		}
	}
	ctx := context.Background()
	st, err := storeopen.Open(ctx, dsn)
	if err != nil {
		m.t.Fatal(err)
	}
	defer st.Close()
	o, err := st.GetAgentOperation(ctx, id)
	if err != nil {
		m.t.Fatal(err)
	}
	o.State, o.Phase, o.AgentID, o.Workspace = agent.StateRunning, agent.PhaseCreate, "", ""
	if err := st.UpdateAgentOperation(ctx, o); err != nil {
		m.t.Fatal(err)
	}
}

func mustWrite(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// release writes to the fifo once a reader has it open.
func release(t *testing.T, fifo string) {
	t.Helper()
	waitFor(t, 30*time.Second, "the fifo's reader", func() bool {
		f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil {
			return false
		}
		_, _ = f.WriteString("go\n")
		_ = f.Close()
		return true
	}, func() string { return "" })
}
