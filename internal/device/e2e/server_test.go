// Package e2e plays a paired device against the real aos binary: aos
// server and aos worker as processes, the scripted model server as the
// only fake, a WebSocket client as the device.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/device"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/testbin"
	"github.com/aos-run/aos/internal/wire"
)

// doneScript passes aos/go-service's three done criteria, then finishes.
const doneScript = `name: test
turns:
  - tool_calls:
      - {name: update_criteria, input: {updates: [{id: c1, passes: true, evidence: "go build ./... ok"}, {id: c2, passes: true, evidence: "go test ./... ok"}, {id: c3, passes: true, evidence: "gofmt -l . empty"}]}}
  - tool_calls:
      - {name: finish, input: {status: done, summary: "wrote the service", evidence: [], openQuestions: []}}
`

const canary = "sk-ant-device-e2e-canary"

// aos is the binary the tests run, built once per test process.
var aos = testbin.New("github.com/aos-run/aos/cmd/aos", "aos", "aos-device-e2e-")

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

// machine is one aos installation: a data dir, a server and a worker.
type machine struct {
	t      *testing.T
	bin    string
	env    []string
	addr   string
	token  string // the owner's API token
	server *exec.Cmd
	logs   *lockedWriter // the server's and worker's stderr
}

func newMachine(t *testing.T, modelURL string) *machine {
	base, err := os.MkdirTemp("", "aosdev-") // short: the sandbox binds sockets under TMPDIR
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	m := &machine{t: t, bin: binary(t), logs: &lockedWriter{}}
	for _, d := range []string{"ws", "home", "tmp"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(base, "home"), "TMPDIR=" + filepath.Join(base, "tmp"),
		"AOS_DATA_DIR=" + filepath.Join(base, "data"), "AOS_WORKSPACE_ROOT=" + filepath.Join(base, "ws"), "AOS_LOG_LEVEL=warn",
		"ANTHROPIC_API_KEY=" + canary, "ANTHROPIC_BASE_URL=" + modelURL}
	m.aos("migrate")
	m.aos("settings", "set", "--default-model", "script:test")
	m.token = strings.TrimSpace(m.aos("token", "create", "--name", "owner"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.addr = ln.Addr().String()
	_ = ln.Close()
	return m
}

func (m *machine) aos(args ...string) string {
	m.t.Helper()
	cmd := exec.Command(m.bin, args...)
	cmd.Env = append(append([]string{}, m.env...), "AOS_SERVER=http://"+m.addr, "AOS_TOKEN="+m.token)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		m.t.Fatalf("aos %v: %v\n%s%s", args, err, out.String(), errb.String())
	}
	return out.String()
}

// startServer runs aos server and waits for its banner.
func (m *machine) startServer() {
	m.t.Helper()
	cmd := exec.Command(m.bin, "server", "--no-setup-token")
	cmd.Env = append(append([]string{}, m.env...), "AOS_ADDR="+m.addr)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, m.logs
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
		m.t.Fatalf("aos server did not start")
	}
}

// startWorker runs aos worker until the test ends.
func (m *machine) startWorker() {
	cmd := exec.Command(m.bin, "worker")
	cmd.Env = append([]string{}, m.env...)
	cmd.Stdout, cmd.Stderr = io.Discard, m.logs
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	m.t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
}

// api calls the owner API with the owner's token.
func (m *machine) api(method, path string, in, out any, token string) int {
	m.t.Helper()
	var body io.Reader
	if in != nil {
		b, _ := json.Marshal(in)
		body = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+m.addr+"/api/v1"+path, body)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		m.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && json.Unmarshal(data, out) != nil {
		m.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
	}
	return resp.StatusCode
}

// robot is the device: a WebSocket client with its token.
type robot struct {
	t      *testing.T
	ws     *websocket.Conn
	frames [][]byte
}

func dial(t *testing.T, addr, token string) *robot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/api/v1/device", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ws.SetReadLimit(1 << 20)
	t.Cleanup(func() { _ = ws.CloseNow() })
	return &robot{t: t, ws: ws}
}

func (r *robot) call(req map[string]any) map[string]any {
	r.t.Helper()
	req["requestId"] = uuid4()
	b, _ := json.Marshal(req)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.ws.Write(ctx, websocket.MessageText, b); err != nil {
		r.t.Fatalf("write: %v", err)
	}
	_, data, err := r.ws.Read(ctx)
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	r.frames = append(r.frames, data)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	if m["requestId"] != req["requestId"] || m["type"] != req["type"].(string)+"_result" {
		r.t.Fatalf("%v answered %s", req["type"], data)
	}
	if e, ok := m["error"]; ok {
		r.t.Fatalf("%v: %v", req["type"], e)
	}
	return m
}

func obj(m map[string]any, k string) map[string]any { v, _ := m[k].(map[string]any); return v }

// TestDeviceOverRealServer is issue 16's Done-when against the real
// binary: aos device pair, the code exchanged for a device token, then
// over the WebSocket list → inspect → prepare aos/go-service in a new
// workspace → poll to ready → turn.send once → the mission runs on the
// scripted model in aos worker and finishes → receipt.get. The server is
// then SIGKILLed and restarted: the same token reconnects, and repeating
// prepare and turn.send answers the same operation and receipt, with still
// exactly one mission. No token, code or provider key reaches a log or a
// frame.
func TestDeviceOverRealServer(t *testing.T) {
	t.Parallel()
	model := scripttest.Start(t, doneScript)
	m := newMachine(t, model.URL())
	m.startServer()
	m.startWorker()

	var p wire.DevicePairing
	if err := json.Unmarshal([]byte(m.aos("device", "pair", "--name", "robot", "--json")), &p); err != nil {
		t.Fatal(err)
	}
	var paired wire.PairedDevice
	if st := m.api("POST", "/device/pair", wire.ExchangePairingRequest{Code: p.Code}, &paired, ""); st != http.StatusCreated {
		t.Fatalf("exchange: %d", st)
	}
	r := dial(t, m.addr, paired.Token)
	h := r.call(map[string]any{"type": "hello", "proto": 1, "capabilities": device.Capabilities})
	machineID := h["machineId"].(string)
	if machineID != paired.MachineID || machineID == "" {
		t.Fatalf("hello machineId %q, paired %q", machineID, paired.MachineID)
	}
	ls := r.call(map[string]any{"type": "store.list", "query": "Go service"})
	pkgs, _ := ls["packages"].([]any)
	if len(pkgs) == 0 || pkgs[0].(map[string]any)["packageId"] != "aos/go-service" {
		t.Fatalf("store.list: %v", ls)
	}
	r.call(map[string]any{"type": "store.inspect", "packageId": "aos/go-service"})
	prep := map[string]any{"type": "agent.prepare", "machineId": machineID, "packageId": "aos/go-service", "idempotencyKey": "prepare-service-001",
		"workspace": map[string]any{"kind": "new", "name": "service"}}
	res := r.call(prep)
	opID := obj(res, "operation")["operationId"].(string)
	var op map[string]any
	deadline := time.Now().Add(90 * time.Second)
	for op == nil || op["state"] != "ready" {
		if time.Now().After(deadline) {
			t.Fatalf("operation never ready: %v", op)
		}
		if op != nil && op["state"] != "accepted" && op["state"] != "running" {
			t.Fatalf("operation ended %v", op)
		}
		time.Sleep(100 * time.Millisecond)
		op = obj(r.call(map[string]any{"type": "operation.get", "operationId": opID}), "operation")
	}
	agentID := op["agentId"].(string)
	turn := map[string]any{"type": "turn.send", "machineId": machineID, "agentId": agentID, "idempotencyKey": "task-service-001",
		"text": "Write a Go HTTP service that answers /health with ok."}
	rc := obj(r.call(turn), "receipt")
	missionID, receiptID := rc["missionId"].(string), rc["receiptId"].(string)
	if missionID == "" || rc["state"] != "accepted" {
		t.Fatalf("receipt %v", rc)
	}
	var ms wire.Mission
	deadline = time.Now().Add(90 * time.Second)
	for ms.Status != "done" {
		if time.Now().After(deadline) {
			t.Fatalf("mission did not finish: %+v\n%s", ms, m.logs)
		}
		time.Sleep(100 * time.Millisecond)
		m.api("GET", "/missions/"+missionID, nil, &ms, m.token)
	}
	if got := obj(r.call(map[string]any{"type": "receipt.get", "receiptId": receiptID}), "receipt"); got["missionId"] != missionID {
		t.Fatalf("receipt.get %v", got)
	}

	// SIGKILL the server; the restarted one knows the device and answers
	// repeated requests with what was done, creating nothing.
	_ = m.server.Process.Signal(syscall.SIGKILL)
	_ = m.server.Wait()
	m.startServer()
	r2 := dial(t, m.addr, paired.Token)
	h2 := r2.call(map[string]any{"type": "hello", "proto": 1, "capabilities": device.Capabilities})
	if h2["serverInstanceId"] == h["serverInstanceId"] || h2["machineId"] != machineID {
		t.Errorf("hello after restart: %v (before %v)", h2, h)
	}
	again := r2.call(prep)
	if again["status"] != "duplicate" || obj(again, "operation")["operationId"] != opID || obj(again, "operation")["agentId"] != agentID {
		t.Errorf("prepare after restart: %v", again)
	}
	rc2 := obj(r2.call(turn), "receipt")
	if rc2["receiptId"] != receiptID || rc2["missionId"] != missionID || rc2["duplicate"] != true {
		t.Errorf("turn.send after restart: %v", rc2)
	}
	var all []wire.Mission
	m.api("GET", "/missions", nil, &all, m.token)
	if len(all) != 1 {
		t.Errorf("%d missions, want 1", len(all))
	}
	// Secrets stay out of logs and frames.
	for _, f := range append(r.frames, r2.frames...) {
		for _, s := range []string{canary, paired.Token, p.Code} {
			if bytes.Contains(f, []byte(s)) {
				t.Errorf("a frame holds a secret: %.200s", f)
			}
		}
	}
	for _, s := range []string{canary, paired.Token, p.Code, m.token} {
		if strings.Contains(m.logs.String(), s) {
			t.Errorf("the server or worker logged a secret")
		}
	}
}

// lockedWriter is a buffer two processes' stderr may share.
type lockedWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedWriter) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
