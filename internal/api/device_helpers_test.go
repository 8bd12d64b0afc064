package api_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/device"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/wire"
)

// fakeOps is a hand-written agent service for the channel's own tests:
// each method calls its Func field when set, else answers a minimal
// success. The end-to-end test uses the real agent service.
type fakeOps struct {
	machine      string
	StoreListF   func(ctx context.Context, id string, r agent.StoreListRequest) (agent.StoreListResult, error)
	InspectF     func(ctx context.Context, id, pkg string) (agent.StoreInspectResult, error)
	PrepareF     func(ctx context.Context, id string, r agent.PrepareRequest) (agent.PrepareResult, error)
	OperationF   func(ctx context.Context, id, op string) (agent.Operation, error)
	SendTurnF    func(ctx context.Context, id string, r agent.TurnSendRequest) (agent.Receipt, error)
	ReceiptF     func(ctx context.Context, id, rc string) (agent.Receipt, error)
	mu           sync.Mutex
	revoked      []string // guarded by mu
	lastIdentity string   // guarded by mu
}

func (f *fakeOps) seen(id string) { f.mu.Lock(); f.lastIdentity = id; f.mu.Unlock() }

func (f *fakeOps) MachineID() string { return f.machine }

func (f *fakeOps) StoreList(ctx context.Context, id string, r agent.StoreListRequest) (agent.StoreListResult, error) {
	f.seen(id)
	if err := agent.CheckStoreList(r); err != nil {
		return agent.StoreListResult{}, err // the service's one rule, as agent.Service applies it
	}
	if f.StoreListF != nil {
		return f.StoreListF(ctx, id, r)
	}
	return agent.StoreListResult{MachineID: f.machine, Packages: []agent.Package{}}, nil
}

func (f *fakeOps) StoreInspect(ctx context.Context, id, pkg string) (agent.StoreInspectResult, error) {
	f.seen(id)
	if f.InspectF != nil {
		return f.InspectF(ctx, id, pkg)
	}
	return agent.StoreInspectResult{MachineID: f.machine, Package: agent.Package{PackageID: pkg}}, nil
}

func (f *fakeOps) Prepare(ctx context.Context, id string, r agent.PrepareRequest) (agent.PrepareResult, error) {
	f.seen(id)
	if f.PrepareF != nil {
		return f.PrepareF(ctx, id, r)
	}
	return agent.PrepareResult{Status: agent.StatusAccepted, Operation: agent.Operation{OperationID: "op1", MachineID: f.machine, PackageID: r.PackageID, State: agent.StateAccepted, Phase: agent.PhaseAccepted, Doctor: []string{}, EngineAuthentication: "unknown"}}, nil
}

func (f *fakeOps) Operation(ctx context.Context, id, op string) (agent.Operation, error) {
	f.seen(id)
	if f.OperationF != nil {
		return f.OperationF(ctx, id, op)
	}
	return agent.Operation{OperationID: op, MachineID: f.machine, State: agent.StateRunning, Doctor: []string{}, EngineAuthentication: "unknown"}, nil
}

func (f *fakeOps) SendTurn(ctx context.Context, id string, r agent.TurnSendRequest) (agent.Receipt, error) {
	f.seen(id)
	if f.SendTurnF != nil {
		return f.SendTurnF(ctx, id, r)
	}
	return agent.Receipt{ReceiptID: "rc1", AgentID: r.AgentID, MissionID: "m1", State: agent.ReceiptAccepted}, nil
}

func (f *fakeOps) Receipt(ctx context.Context, id, rc string) (agent.Receipt, error) {
	f.seen(id)
	if f.ReceiptF != nil {
		return f.ReceiptF(ctx, id, rc)
	}
	return agent.Receipt{ReceiptID: rc, State: agent.ReceiptAccepted}, nil
}

func (f *fakeOps) Revoke(_ context.Context, id string) error {
	f.mu.Lock()
	f.revoked = append(f.revoked, id)
	f.mu.Unlock()
	return nil
}

func (f *fakeOps) revokedIDs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.revoked...)
}

// deviceBundle is a real API server with the device channel over ops.
func deviceBundle(t testing.TB, ops device.Ops, lim device.Limits, tls ...bool) *bundle {
	t.Helper()
	db := storetest.New(t, "sqlite")
	var o setupOpts
	o.tls = len(tls) > 0 && tls[0]
	clk := &testClock{t: time.Now()}
	o.api.Devices = device.New(db.Store, device.Options{Ops: ops, Limits: lim, Now: clk.Now, PairTTL: time.Minute})
	b := setup(t, db, o)
	b.clk = clk
	return b
}

// pair creates a pairing code with the write token and exchanges it.
func (b *bundle) pair(name string) wire.PairedDevice {
	b.t.Helper()
	var p wire.DevicePairing
	b.ok("POST", "/devices/pairings", map[string]any{"name": name}, &p)
	b.logSecret(p.Code)
	status, out := b.do("POST", "/device/pair", map[string]any{"code": p.Code}, "")
	if status != http.StatusCreated {
		b.t.Fatalf("exchange: %d %s", status, out)
	}
	var d wire.PairedDevice
	if err := json.Unmarshal(out, &d); err != nil {
		b.t.Fatal(err)
	}
	b.logSecret(d.Token)
	return d
}

// logSecret fails the test at cleanup if s (a pairing code, a device
// token: shown once in their own response by design) is in any log line or
// audit record.
func (b *bundle) logSecret(s string) {
	b.t.Cleanup(func() {
		if strings.Contains(b.logs.String(), s) {
			b.t.Errorf("a log line holds a pairing code or device token")
		}
		recs, err := b.st.ListAudit(context.Background(), store.ListAuditParams{})
		if err != nil {
			b.t.Error(err)
		}
		for _, r := range recs {
			if strings.Contains(string(r.Detail)+r.Target+r.Actor, s) {
				b.t.Errorf("audit record %+v holds a pairing code or device token", r)
			}
		}
	})
}

// wsDevice is the test's device: a real WebSocket client.
type wsDevice struct {
	t  testing.TB
	b  *bundle
	ws *websocket.Conn
}

// dialDevice opens the channel with a device token.
func (b *bundle) dialDevice(token string) (*wsDevice, *http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(b.srv.URL, "http") + "/api/v1/device"
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: b.srv.Client(), HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		return nil, resp, err
	}
	ws.SetReadLimit(1 << 20)
	d := &wsDevice{t: b.t, b: b, ws: ws}
	b.t.Cleanup(func() { _ = ws.CloseNow() })
	return d, resp, nil
}

func (b *bundle) mustDial(token string) *wsDevice {
	b.t.Helper()
	d, resp, err := b.dialDevice(token)
	if err != nil {
		b.t.Fatalf("dial the device channel: %v (%v)", err, resp)
	}
	return d
}

// sendRaw writes one text frame.
func (d *wsDevice) sendRaw(frame string) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		d.t.Fatalf("write: %v", err)
	}
}

// send writes a request (requestId added when absent) and returns its id.
func (d *wsDevice) send(req map[string]any) string {
	d.t.Helper()
	if _, ok := req["requestId"]; !ok {
		req["requestId"] = uuid4()
	}
	b, _ := json.Marshal(req)
	d.sendRaw(string(b))
	id, _ := req["requestId"].(string)
	return id
}

// recv reads one frame as a map.
func (d *wsDevice) recv() map[string]any {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, data, err := d.ws.Read(ctx)
	if err != nil {
		d.t.Fatalf("read: %v", err)
	}
	d.b.record(data)
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		d.t.Fatalf("frame %s: %v", data, err)
	}
	return m
}

// call sends a request and reads its answer.
func (d *wsDevice) call(req map[string]any) map[string]any {
	d.t.Helper()
	id := d.send(req)
	m := d.recv()
	if m["requestId"] != id {
		d.t.Fatalf("answer %v does not echo requestId %s", m, id)
	}
	return m
}

// hello negotiates every capability.
func (d *wsDevice) hello() map[string]any {
	d.t.Helper()
	m := d.call(map[string]any{"type": "hello", "proto": 1, "capabilities": device.Capabilities})
	if m["type"] != "hello_result" || m["error"] != nil {
		d.t.Fatalf("hello: %v", m)
	}
	return m
}

// errCode returns a frame's error code, "" if it has none.
func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
