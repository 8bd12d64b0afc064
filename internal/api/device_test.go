package api_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/device"
	"github.com/aos-run/aos/internal/wire"
)

// TestDevicePairing: a code is single use, expires, is throttled per
// address, and is never stored, logged or audited in the clear.
func TestDevicePairing(t *testing.T) {
	t.Parallel()
	ops := &fakeOps{machine: "machine-1"}
	b := deviceBundle(t, ops, device.Limits{})
	var p wire.DevicePairing
	b.ok("POST", "/devices/pairings", map[string]any{"name": "phone"}, &p)
	b.logSecret(p.Code)
	if !strings.HasPrefix(p.URL, "aos://pair?") || !strings.Contains(p.URL, "code="+p.Code) || !strings.Contains(p.URL, "server=http") {
		t.Errorf("pairing URL %q", p.URL)
	}
	// A read token may not pair.
	if status, _ := b.do("POST", "/devices/pairings", map[string]any{"name": "x"}, b.read); status != http.StatusForbidden {
		t.Errorf("pair with a read token: %d, want 403", status)
	}
	// Typed in lower case, without dashes: still the code.
	status, out := b.do("POST", "/device/pair", map[string]any{"code": strings.ToLower(strings.ReplaceAll(p.Code, "-", ""))}, "")
	if status != http.StatusCreated {
		t.Fatalf("exchange: %d %s", status, out)
	}
	var d wire.PairedDevice
	_ = json.Unmarshal(out, &d)
	b.logSecret(d.Token)
	if !strings.HasPrefix(d.Token, device.TokenPrefix) || d.MachineID != "machine-1" || d.DeviceID == "" {
		t.Fatalf("paired = %+v", d)
	}
	// Single use.
	if status, _ := b.do("POST", "/device/pair", map[string]any{"code": p.Code}, ""); status != http.StatusUnauthorized {
		t.Errorf("second exchange: %d, want 401", status)
	}
	// Expiry (PairTTL is a minute here).
	var p2 wire.DevicePairing
	b.ok("POST", "/devices/pairings", map[string]any{"name": "robot"}, &p2)
	b.logSecret(p2.Code)
	b.clk.Add(61 * time.Second)
	if status, _ := b.do("POST", "/device/pair", map[string]any{"code": p2.Code}, ""); status != http.StatusUnauthorized {
		t.Errorf("expired exchange: %d, want 401", status)
	}
	// Throttle: a fresh valid code is refused once the address spent its
	// free attempts on wrong ones, and Retry-After says how long.
	var p3 wire.DevicePairing
	b.ok("POST", "/devices/pairings", map[string]any{"name": "tablet"}, &p3)
	b.logSecret(p3.Code)
	wrong := 0
	for {
		status, _ := b.do("POST", "/device/pair", map[string]any{"code": "0000-0000-0000"}, "")
		if status == http.StatusTooManyRequests {
			break
		}
		if status != http.StatusUnauthorized || wrong > device.DefaultThrottle.IPFree {
			t.Fatalf("wrong code #%d: %d, want 401 then 429 within %d attempts", wrong+1, status, device.DefaultThrottle.IPFree+1)
		}
		wrong++
	}
	resp, out := b.send("POST", "/device/pair", map[string]any{"code": p3.Code}, nil, true)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("past the throttle: %d %s (Retry-After %q), want 429", resp.StatusCode, out, resp.Header.Get("Retry-After"))
	}
	b.clk.Add(2 * time.Minute) // the first lock is 1 minute; p3 expired too
	var p4 wire.DevicePairing
	b.ok("POST", "/devices/pairings", map[string]any{"name": "tablet"}, &p4)
	b.logSecret(p4.Code)
	if status, out := b.do("POST", "/device/pair", map[string]any{"code": p4.Code}, ""); status != http.StatusCreated {
		t.Fatalf("after the lock: %d %s", status, out)
	}
	// Listing shows the devices, never a token; the audit names pair,
	// paired, and nothing secret.
	var ds []wire.Device
	b.ok("GET", "/devices", nil, &ds)
	if len(ds) != 2 || ds[0].Name != "phone" || ds[1].Name != "tablet" {
		t.Fatalf("devices = %+v", ds)
	}
	var audit []struct{ Actor, Action, Target string }
	b.ok("GET", "/system/audit", nil, &audit)
	var actions []string
	for _, a := range audit {
		actions = append(actions, a.Action)
	}
	for _, want := range []string{"device.pair", "device.paired"} {
		if !slices.Contains(actions, want) {
			t.Errorf("audit %v lacks %s", actions, want)
		}
	}
	// The store holds neither the code nor the token.
	raw, err := b.st.ListDevices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range raw {
		if strings.Contains(r.TokenHash, d.Token) || len(r.TokenHash) != 64 {
			t.Errorf("device row holds %q, want a SHA-256", r.TokenHash)
		}
	}
	// Bad names are refused.
	for _, name := range []string{"", strings.Repeat("x", 65), "evil\x1b[2J"} {
		b.fails("POST", "/devices/pairings", map[string]any{"name": name}, http.StatusBadRequest, "invalid_input")
	}
}

// TestDeviceTokenReachesOnlyTheChannel walks the whole route table with a
// live device token: every route but the public ones and the channel
// refuses it (401 or 403), so a new owner route cannot forget it. The
// channel in turn refuses API tokens and owner sessions.
func TestDeviceTokenReachesOnlyTheChannel(t *testing.T) {
	t.Parallel()
	b := deviceBundle(t, &fakeOps{machine: "m"}, device.Limits{})
	d := b.pair("phone")
	channel := 0
	for _, rt := range b.api.Routes() {
		path := strings.ReplaceAll(strings.ReplaceAll(rt.Pattern, "{id}", "x"), "{", "")
		if rt.Public {
			continue
		}
		if rt.Device {
			channel++
			continue
		}
		status, body := b.do(rt.Method, path, "{}", d.Token)
		if status != http.StatusUnauthorized && status != http.StatusForbidden {
			t.Errorf("%s %s with a device token: %d %s, want 401 or 403", rt.Method, rt.Pattern, status, body)
		}
	}
	if channel != 1 {
		t.Errorf("%d device routes, want 1", channel)
	}
	// Unknown paths too.
	if status, _ := b.do("GET", "/no/such/route", nil, d.Token); status != http.StatusUnauthorized {
		t.Errorf("unknown route with a device token: %d, want 401", status)
	}
	// The channel refuses everything but a live device token.
	for name, tok := range map[string]string{"none": "", "write token": b.write, "read token": b.read, "unknown": device.TokenPrefix + strings.Repeat("A", 43)} {
		if _, resp, err := b.dialDevice(tok); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("channel with %s: %v %v, want 401", name, err, resp)
		}
	}
	b.mustDial(d.Token).hello()
}

// TestDeviceChannelErrors reaches every channel error code and carries
// every agent service code unchanged, each through a real socket.
func TestDeviceChannelErrors(t *testing.T) {
	t.Parallel()
	ops := &fakeOps{machine: "m1"}
	b := deviceBundle(t, ops, device.Limits{Burst: 1000, Rate: 1})
	tok := b.pair("phone").Token

	// Before hello.
	d := b.mustDial(tok)
	if m := d.call(map[string]any{"type": "store.list"}); errCode(m) != agent.CodeHelloRequired || m["type"] != "store.list_result" {
		t.Errorf("op before hello: %v", m)
	}
	if m := d.call(map[string]any{"type": "hello", "proto": 2, "capabilities": []string{}}); errCode(m) != agent.CodeProtoUnsupported {
		t.Errorf("proto 2: %v", m)
	}
	// A hello that lists only store.list: the others are not negotiated.
	d.call(map[string]any{"type": "hello", "proto": 1, "capabilities": []string{"store.list", "dsh_install"}})
	if m := d.call(map[string]any{"type": "operation.get", "operationId": "x"}); errCode(m) != agent.CodeUnsupportedCapability {
		t.Errorf("un-negotiated op: %v", m)
	}
	if m := d.call(map[string]any{"type": "hello", "proto": 1, "capabilities": []string{}}); errCode(m) != agent.CodeInvalidRequest {
		t.Errorf("second hello: %v", m)
	}

	d = b.mustDial(tok)
	h := d.hello()
	if h["machineId"] != "m1" || h["proto"] != float64(1) || len(h["capabilities"].([]any)) != 6 {
		t.Errorf("hello_result = %v", h)
	}
	fixed := uuid4()
	for _, c := range []struct {
		name  string
		frame string
		code  string
	}{
		{"not JSON", `{`, agent.CodeInvalidRequest},
		{"not an object", `[1]`, agent.CodeInvalidRequest},
		{"no type", `{"requestId":"` + uuid4() + `"}`, agent.CodeInvalidRequest},
		{"unknown op", `{"type":"dsh_install","requestId":"` + uuid4() + `"}`, agent.CodeUnsupportedCapability},
		{"older op", `{"type":"agent_create","requestId":"` + uuid4() + `"}`, agent.CodeUnsupportedCapability},
		{"no requestId", `{"type":"store.list"}`, agent.CodeInvalidRequest},
		{"requestId not v4", `{"type":"store.list","requestId":"11111111-1111-1111-8111-111111111111"}`, agent.CodeInvalidRequest},
		{"requestId a number", `{"type":"store.list","requestId":5}`, agent.CodeInvalidRequest},
		{"fresh requestId", `{"type":"store.list","requestId":"` + fixed + `"}`, ""},
		{"reused requestId", `{"type":"store.list","requestId":"` + fixed + `"}`, agent.CodeInvalidRequest},
		{"reused requestId, other case", `{"type":"store.list","requestId":"` + strings.ToUpper(fixed) + `"}`, agent.CodeInvalidRequest},
		{"unknown field", `{"type":"store.list","requestId":"` + uuid4() + `","frobnicate":1}`, agent.CodeInvalidRequest},
		{"wrong type", `{"type":"store.list","requestId":"` + uuid4() + `","limit":"5"}`, agent.CodeInvalidRequest},
		{"query too long", `{"type":"store.list","requestId":"` + uuid4() + `","query":"` + strings.Repeat("é", 201) + `"}`, agent.CodeInvalidRequest},
		{"query at the limit", `{"type":"store.list","requestId":"` + uuid4() + `","query":"` + strings.Repeat("é", 200) + `"}`, ""},
		{"offset negative", `{"type":"store.list","requestId":"` + uuid4() + `","offset":-1}`, agent.CodeInvalidRequest},
		{"offset too far", `{"type":"store.list","requestId":"` + uuid4() + `","offset":25001}`, agent.CodeInvalidRequest},
		{"offset at the limit", `{"type":"store.list","requestId":"` + uuid4() + `","offset":25000}`, ""},
		{"limit 0", `{"type":"store.list","requestId":"` + uuid4() + `","limit":0}`, agent.CodeInvalidRequest},
		{"limit 11", `{"type":"store.list","requestId":"` + uuid4() + `","limit":11}`, agent.CodeInvalidRequest},
		{"limit 10", `{"type":"store.list","requestId":"` + uuid4() + `","limit":10}`, ""},
		{"trailing data", `{"type":"store.list","requestId":"` + uuid4() + `"} {}`, agent.CodeInvalidRequest},
		{"other machine", `{"type":"store.list","requestId":"` + uuid4() + `","machineId":"m2"}`, agent.CodeMachineMismatch},
		{"inspect without package", `{"type":"store.inspect","requestId":"` + uuid4() + `"}`, agent.CodeInvalidRequest},
		{"prepare with text", `{"type":"agent.prepare","requestId":"` + uuid4() + `","machineId":"m1","packageId":"aos/go-service","idempotencyKey":"k","workspace":{"kind":"new"},"text":"go"}`, agent.CodeInvalidRequest},
		{"prepare with prompt in workspace", `{"type":"agent.prepare","requestId":"` + uuid4() + `","machineId":"m1","packageId":"aos/go-service","idempotencyKey":"k","workspace":{"kind":"new","prompt":"go"}}`, agent.CodeInvalidRequest},
		{"prepare without workspace", `{"type":"agent.prepare","requestId":"` + uuid4() + `","machineId":"m1","packageId":"aos/go-service","idempotencyKey":"k"}`, agent.CodeInvalidRequest},
		{"prepare without machine", `{"type":"agent.prepare","requestId":"` + uuid4() + `","packageId":"aos/go-service","idempotencyKey":"k","workspace":{"kind":"new"}}`, agent.CodeInvalidRequest},
		{"prepare on another machine", `{"type":"agent.prepare","requestId":"` + uuid4() + `","machineId":"m2","packageId":"aos/go-service","idempotencyKey":"k","workspace":{"kind":"new"}}`, agent.CodeMachineMismatch},
		{"turn without text", `{"type":"turn.send","requestId":"` + uuid4() + `","machineId":"m1","agentId":"a","idempotencyKey":"t"}`, agent.CodeInvalidRequest},
		{"operation without id", `{"type":"operation.get","requestId":"` + uuid4() + `"}`, agent.CodeInvalidRequest},
		{"receipt without id", `{"type":"receipt.get","requestId":"` + uuid4() + `"}`, agent.CodeInvalidRequest},
	} {
		d.sendRaw(c.frame)
		m := d.recv()
		if got := errCode(m); got != c.code {
			t.Errorf("%s: code %q (%v), want %q", c.name, got, m, c.code)
		}
		if c.code != "" && m["type"] == nil {
			t.Errorf("%s: error frame without type: %v", c.name, m)
		}
	}

	// Every agent service code is carried with its message, before any
	// reservation: {type, requestId, error:{code,message}}, no operation.
	codes := []string{agent.CodePackageNotFound, agent.CodePackageReviewRequired, agent.CodePackageBroken, agent.CodeDependencyNotReady,
		agent.CodeInvalidWorkspace, agent.CodeWorkspaceInUse, agent.CodeIdempotencyConflict, agent.CodeOperationNotFound, agent.CodeStorageFailed,
		agent.CodeInstallUnconfirmed, agent.CodeCreationUnconfirmed, agent.CodePreparationUnconfirmed, agent.CodeRecoveryRequired,
		agent.CodeEngineActionRequired, agent.CodeAgentUnavailable, agent.CodeRevoked, agent.CodeInternal, agent.CodeInvalidRequest,
		agent.CodeDSHBusy, agent.CodeCloneFailed}
	for _, code := range codes {
		ops.PrepareF = func(context.Context, string, agent.PrepareRequest) (agent.PrepareResult, error) {
			return agent.PrepareResult{}, &agent.Error{Code: code, Message: "because " + code, Err: errors.New("secret cause /root/x")}
		}
		m := d.call(map[string]any{"type": "agent.prepare", "machineId": "m1", "packageId": "aos/go-service", "idempotencyKey": "k", "workspace": map[string]any{"kind": "new"}})
		e, _ := m["error"].(map[string]any)
		if errCode(m) != code || e["message"] != "because "+code || m["operation"] != nil || m["type"] != "agent.prepare_result" || len(e) != 2 {
			t.Errorf("service code %s: %v", code, m)
		}
	}
	// An untyped failure is INTERNAL and its text stays in the log.
	ops.OperationF = func(context.Context, string, string) (agent.Operation, error) {
		return agent.Operation{}, errors.New("database exploded at /var/secret")
	}
	if m := d.call(map[string]any{"type": "operation.get", "operationId": "x"}); errCode(m) != agent.CodeInternal || strings.Contains(m["error"].(map[string]any)["message"].(string), "exploded") {
		t.Errorf("untyped failure: %v", m)
	}
	// The identity the service sees is the device's.
	ops.mu.Lock()
	id := ops.lastIdentity
	ops.mu.Unlock()
	if !strings.HasPrefix(id, "device:dev_") {
		t.Errorf("identity %q", id)
	}
	// A frame over the size bound closes the socket with 1009.
	d.sendRaw(`{"type":"store.list","requestId":"` + uuid4() + `","query":"` + strings.Repeat("x", int(device.DefaultLimits.MaxMessage)) + `"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := d.ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("oversized frame: %v, want close 1009", err)
	}
}

// TestDeviceRateLimitAndBackpressure: a device past its bucket gets
// RATE_LIMITED (across its sockets); a socket past its in-flight bound
// gets BACKPRESSURE, and the held requests still complete.
func TestDeviceRateLimitAndBackpressure(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	ops := &fakeOps{machine: "m"}
	ops.OperationF = func(ctx context.Context, _, id string) (agent.Operation, error) {
		if id == "slow" {
			select {
			case <-release:
			case <-ctx.Done():
				return agent.Operation{}, ctx.Err()
			}
		}
		return agent.Operation{OperationID: id, State: agent.StateRunning, Doctor: []string{}}, nil
	}
	b := deviceBundle(t, ops, device.Limits{Rate: 0.001, Burst: 6, MaxInFlight: 2})
	tok := b.pair("phone").Token
	d := b.mustDial(tok)
	d.hello() // 1 token
	slow1 := d.send(map[string]any{"type": "operation.get", "operationId": "slow"})
	slow2 := d.send(map[string]any{"type": "operation.get", "operationId": "slow"})
	if m := d.call(map[string]any{"type": "operation.get", "operationId": "fast"}); errCode(m) != agent.CodeBackpressure {
		t.Errorf("third in flight: %v, want BACKPRESSURE", m)
	}
	close(release)
	got := map[any]bool{}
	for range 2 {
		m := d.recv()
		if errCode(m) != "" {
			t.Errorf("held request: %v", m)
		}
		got[m["requestId"]] = true
	}
	if !got[slow1] || !got[slow2] {
		t.Errorf("held requests answered: %v", got)
	}
	// 4 tokens spent; the bucket (6) is shared by the device's sockets.
	d2 := b.mustDial(tok)
	d2.hello()
	if m := d.call(map[string]any{"type": "operation.get", "operationId": "fast"}); errCode(m) != "" {
		t.Errorf("last token: %v", m)
	}
	if m := d2.call(map[string]any{"type": "operation.get", "operationId": "fast"}); errCode(m) != agent.CodeRateLimited {
		t.Errorf("past the bucket on another socket: %v, want RATE_LIMITED", m)
	}
	// A device has at most MaxSockets (4) open: the fifth closes at once.
	// A socket counts once the server registers it, after the handshake
	// the dial returns on: an answer (here RATE_LIMITED, which costs no
	// token) says the third and fourth are registered before the fifth
	// dials, or the fifth could take the fourth's place.
	for range 2 {
		if m := b.mustDial(tok).call(map[string]any{"type": "operation.get", "operationId": "fast"}); errCode(m) != agent.CodeRateLimited {
			t.Errorf("a socket past the bucket: %v, want RATE_LIMITED", m)
		}
	}
	fifth := b.mustDial(tok)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := fifth.ws.Read(ctx); websocket.CloseStatus(err) != websocket.StatusTryAgainLater {
		t.Errorf("fifth socket: %v, want close 1013", err)
	}
	// Another device has its own bucket.
	other := b.mustDial(b.pair("robot").Token)
	other.hello()
	b.clk.Add(time.Hour) // 3.6 tokens refill
	if m := d.call(map[string]any{"type": "operation.get", "operationId": "fast"}); errCode(m) != "" {
		t.Errorf("after refill: %v", m)
	}
}

// TestDeviceRevokedMidOperation: revoking closes the device's sockets at
// once (4403) while an operation is in flight, ends that operation's
// context, tells the agent service, refuses the token from then on, and
// deletes nothing.
func TestDeviceRevokedMidOperation(t *testing.T) {
	t.Parallel()
	started, ended := make(chan struct{}), make(chan error, 1)
	ops := &fakeOps{machine: "m"}
	ops.PrepareF = func(ctx context.Context, _ string, r agent.PrepareRequest) (agent.PrepareResult, error) {
		close(started)
		<-ctx.Done()
		ended <- ctx.Err()
		return agent.PrepareResult{}, ctx.Err()
	}
	b := deviceBundle(t, ops, device.Limits{})
	pd := b.pair("phone")
	d := b.mustDial(pd.Token)
	d.hello()
	d2 := b.mustDial(pd.Token)
	d2.hello()
	d.send(map[string]any{"type": "agent.prepare", "machineId": "m", "packageId": "aos/go-service", "idempotencyKey": "k", "workspace": map[string]any{"kind": "new"}})
	<-started
	var ds []wire.Device
	b.ok("GET", "/devices", nil, &ds)
	if len(ds) != 1 || ds[0].Connected != 2 {
		t.Fatalf("devices before revoke = %+v", ds)
	}
	t0 := time.Now()
	if status, out := b.do("DELETE", "/devices/"+pd.DeviceID, nil, b.write); status != http.StatusNoContent {
		t.Fatalf("revoke: %d %s", status, out)
	}
	for _, c := range []*wsDevice{d, d2} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _, err := c.ws.Read(ctx)
		cancel()
		if websocket.CloseStatus(err) != device.StatusRevoked {
			t.Errorf("socket after revoke: %v, want close %d", err, device.StatusRevoked)
		}
	}
	if el := time.Since(t0); el > 2*time.Second {
		t.Errorf("sockets closed %v after revoke, want at once", el)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("operation context: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the in-flight operation's context did not end")
	}
	if got := ops.revokedIDs(); len(got) != 1 || got[0] != "device:"+pd.DeviceID {
		t.Errorf("agent service revocations = %v", got)
	}
	if _, resp, err := b.dialDevice(pd.Token); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("revoked token dials: %v %v, want 401", err, resp)
	}
	b.ok("GET", "/devices", nil, &ds)
	if len(ds) != 1 || ds[0].RevokedAt == 0 || ds[0].Connected != 0 {
		t.Errorf("devices after revoke = %+v, want it kept, revoked, disconnected", ds)
	}
	b.fails("DELETE", "/devices/"+pd.DeviceID, nil, http.StatusNotFound, "not_found")
	var audit []struct{ Action, Target string }
	b.ok("GET", "/system/audit", nil, &audit)
	if !slices.ContainsFunc(audit, func(a struct{ Action, Target string }) bool {
		return a.Action == "device.revoke" && a.Target == pd.DeviceID
	}) {
		t.Errorf("audit lacks the revocation: %+v", audit)
	}
}

// TestDeviceChannelOverTLS: the channel is the server's own listener, so
// it is served with the server's TLS configuration (wss://), and the
// pairing URL names the https origin.
func TestDeviceChannelOverTLS(t *testing.T) {
	t.Parallel()
	b := deviceBundle(t, &fakeOps{machine: "m"}, device.Limits{}, true)
	if !strings.HasPrefix(b.srv.URL, "https://") {
		t.Fatalf("server %s", b.srv.URL)
	}
	var p wire.DevicePairing
	b.ok("POST", "/devices/pairings", map[string]any{"name": "phone"}, &p)
	b.logSecret(p.Code)
	if !strings.Contains(p.URL, "server=https%3A%2F%2F") {
		t.Errorf("pairing URL %q does not name the https origin", p.URL)
	}
	status, out := b.do("POST", "/device/pair", map[string]any{"code": p.Code}, "")
	var d wire.PairedDevice
	if err := json.Unmarshal(out, &d); err != nil || status != http.StatusCreated {
		t.Fatalf("exchange over TLS: %d %s", status, out)
	}
	b.logSecret(d.Token)
	if h := b.mustDial(d.Token).hello(); h["machineId"] != "m" {
		t.Fatalf("hello over wss: %v", h)
	}
}
