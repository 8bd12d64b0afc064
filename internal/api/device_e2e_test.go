package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/device"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/worker"
)

// doneScript marks the go-service package's three done criteria as
// passing, then finishes: the model's brain is the only fake.
const doneScript = `name: test
turns:
  - tool_calls:
      - {name: update_criteria, input: {updates: [{id: c1, passes: true, evidence: "go build ./... ok"}, {id: c2, passes: true, evidence: "go test ./... ok"}, {id: c3, passes: true, evidence: "gofmt -l . empty"}]}}
  - tool_calls:
      - {name: finish, input: {status: done, summary: "wrote the service", evidence: [], openQuestions: []}}
`

// lateOps is the agent service, set once the mission service it needs
// exists (the device service is made before it, in setup).
type lateOps struct{ agent.API }

// agentBundle is a real API server whose device channel runs over the real
// agent service, with a kernel worker running missions on the scripted
// model server and the real sandbox.
func agentBundle(t *testing.T, db storetest.DB) *bundle {
	b, _ := agentBundleSvc(t, db)
	return b
}

// agentBundleSvc is agentBundle, with its agent service.
func agentBundleSvc(t *testing.T, db storetest.DB) (*bundle, *agent.Service) {
	t.Helper()
	srv := scripttest.Start(t, doneScript)
	ops := &lateOps{}
	clk := &testClock{t: time.Now()}
	var o setupOpts
	o.env = map[string]string{"ANTHROPIC_BASE_URL": srv.URL()}
	o.api.Devices = device.New(db.Store, device.Options{Ops: ops, Now: clk.Now, Limits: device.Limits{Burst: 10000, Rate: 1000}})
	b := setup(t, db, o)
	ctx := context.Background()
	model := "script:test"
	if _, err := b.svc.PutSettings(ctx, "cli:test", mission.Settings{DefaultModel: &model}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ANTHROPIC_API_KEY": fakeAnthropicKey, "PATH": os.Getenv("PATH"), "HOME": t.TempDir()}
	as, err := agent.New(agent.Options{Store: db.Store, Missions: b.svc, WorkspaceRoot: b.root, DataDir: t.TempDir(),
		Getenv: func(k string) string { return env[k] }, SetupTimeout: 30 * time.Second, DoctorTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	actx, stopAgents := context.WithCancel(ctx)
	if err := as.Start(actx); err != nil {
		t.Fatal(err)
	}
	ops.API = as
	dataDir := t.TempDir()
	sb, err := sandbox.New(sandbox.Config{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	deps := worker.EngineDeps(b.k, dataDir, sb, worker.AdapterFunc(srv.URL(), func(k string) string { return env[k] }))
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = b.k.RunWorker(wctx, kernel.WorkerConfig{Concurrency: 1, Logics: map[string]kernel.Logic{engine.LogicName: engine.AgentLogic(deps)},
			JanitorEvery: 50 * time.Millisecond})
	}()
	t.Cleanup(func() { stop(); wg.Wait(); stopAgents(); as.Wait() })
	return b, as
}

// fixtureStep is one request of the replayed flow.
type fixtureStep struct {
	Name  string            `json:"name"`
	Until map[string]string `json:"until,omitempty"`
	// Loose names fields whose value depends on timing in this step (a
	// duplicate's state while the job runs); they are normalized too.
	Loose   []string       `json:"loose,omitempty"`
	Request map[string]any `json:"request"`
}

// expected is one normalized answer of the golden file.
type expected struct {
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// TestDeviceFixture is issue 16's Done-when, played by a device over a
// paired WebSocket against a real server, agent service, kernel worker,
// sandbox and scripted model: list → inspect → prepare an official package
// in a new workspace → poll to ready → turn.send once → the mission runs
// and finishes → receipt.get. Repeated requests answer the same operation
// and receipt and create nothing more. The requests are
// testdata/device/go-service.requests.json; every answer, normalized, must
// equal go-service.fixture.json.
func TestDeviceFixture(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := agentBundle(t, db)
		d := b.mustDial(b.pair("robot").Token)
		var spec struct {
			Steps []fixtureStep `json:"steps"`
		}
		readJSON(t, "testdata/device/go-service.requests.json", &spec)
		vars := map[string]string{}
		var got []expected
		for _, st := range spec.Steps {
			var m map[string]any
			deadline := time.Now().Add(60 * time.Second)
			for {
				req := substitute(t, st.Request, vars).(map[string]any)
				m = d.call(req)
				if st.Until == nil || untilHolds(m, st.Until) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: never reached %v; last %v", st.Name, st.Until, m)
				}
				time.Sleep(50 * time.Millisecond)
			}
			capture(m, vars)
			loose := map[string]bool{}
			for _, k := range st.Loose {
				loose[k] = true
			}
			raw, _ := json.Marshal(normalize(volatile, loose, "", m))
			got = append(got, expected{Name: st.Name, Response: raw})
		}
		golden := "testdata/device/go-service.fixture.json"
		if *update && db.Driver == "sqlite" {
			out, _ := json.MarshalIndent(got, "", "  ")
			if err := os.WriteFile(golden, append(out, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var want []expected
		readJSON(t, golden, &want)
		if len(want) != len(got) {
			t.Fatalf("%d answers, the fixture has %d", len(got), len(want))
		}
		for i := range want {
			var w, g bytes.Buffer
			_ = json.Compact(&w, want[i].Response)
			_ = json.Compact(&g, got[i].Response)
			if want[i].Name != got[i].Name || w.String() != g.String() {
				t.Errorf("step %q:\n got %s\nwant %s", got[i].Name, g.String(), w.String())
			}
		}
		// The mission the task created runs on the scripted model and
		// finishes; the repeated send created no second one.
		missionID := vars["missionId"]
		var ms []mission.Mission
		var last mission.Mission
		deadline := time.Now().Add(60 * time.Second)
		for last.Status != kernel.StatusDone {
			if time.Now().After(deadline) {
				var waits []mission.Wait
				b.ok("GET", "/waits", nil, &waits)
				t.Fatalf("the agent's mission did not finish: %+v; waits %+v", last, waits)
			}
			time.Sleep(20 * time.Millisecond)
			b.ok("GET", "/missions/"+missionID, nil, &last)
		}
		b.ok("GET", "/missions", nil, &ms)
		if len(ms) != 1 || ms[0].ID != missionID {
			t.Errorf("missions = %d, want exactly the one of the receipt", len(ms))
		}
		// The workspace was made from the package's template, with its
		// instructions.
		if _, err := os.Stat(filepath.Join(vars["workspace"], "AGENTS.md")); err != nil {
			t.Errorf("the agent's workspace has no AGENTS.md: %v", err)
		}
		// Receipt after the mission ended: still the same, and it says the
		// mission is done, so the device sees the end without the owner API.
		if m := d.call(map[string]any{"type": "receipt.get", "receiptId": vars["receiptId"]}); errCode(m) != "" || m["receipt"].(map[string]any)["missionId"] != missionID ||
			m["receipt"].(map[string]any)["missionStatus"] != kernel.StatusDone {
			t.Errorf("receipt after the end: %v", m)
		}
	})
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// substitute fills a request's $uuid and $name placeholders.
func substitute(t *testing.T, v any, vars map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = substitute(t, e, vars)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substitute(t, e, vars)
		}
		return out
	case string:
		if x == "$uuid" {
			return uuid4()
		}
		if name, ok := strings.CutPrefix(x, "$"); ok {
			val, ok := vars[name]
			if !ok {
				t.Fatalf("no value for %s yet", x)
			}
			return val
		}
	}
	return v
}

// untilHolds reports whether the answer's operation has the wanted fields.
func untilHolds(m map[string]any, until map[string]string) bool {
	op, _ := m["operation"].(map[string]any)
	for k, v := range until {
		if fmt.Sprint(op[k]) != v {
			return false
		}
	}
	return true
}

// capture remembers the ids later requests name.
func capture(m map[string]any, vars map[string]string) {
	if id, ok := m["machineId"].(string); ok && m["type"] == "hello_result" {
		vars["machineId"] = id
	}
	if op, ok := m["operation"].(map[string]any); ok {
		if id, ok := op["operationId"].(string); ok && vars["operationId"] == "" {
			vars["operationId"] = id
		}
		if id, ok := op["agentId"].(string); ok {
			vars["agentId"] = id
		}
		if w, ok := op["workspace"].(string); ok {
			vars["workspace"] = w
		}
	}
	if rc, ok := m["receipt"].(map[string]any); ok {
		if id, ok := rc["receiptId"].(string); ok && vars["receiptId"] == "" {
			vars["receiptId"] = id
		}
		if id, ok := rc["missionId"].(string); ok && id != "" {
			vars["missionId"] = id
		}
	}
}

// volatile are the fields whose values differ between runs: ids, times,
// paths and tool versions. normalize keeps their presence and type.
var volatile = map[string]bool{"requestId": true, "machineId": true, "deviceId": true, "serverInstanceId": true, "operationId": true,
	"agentId": true, "receiptId": true, "missionId": true, "workspace": true, "createdAt": true, "updatedAt": true, "checkedAt": true,
	"version": true, "lines": true, "doctor": true, "missionStatus": true}

// normalize replaces what differs between runs: the values of volatile
// keys by their shape, and those of a step's loose keys by a mark whatever
// they are (null, a value, a list): an answer whose operation may have
// moved on by the time it is asked (a duplicate prepare while the first
// one runs).
func normalize(vol, loose map[string]bool, key string, v any) any {
	if loose[key] {
		return "<any " + key + ">"
	}
	if vol[key] {
		switch x := v.(type) {
		case string:
			if x == "" {
				return ""
			}
			return "<" + key + ">"
		case float64:
			return 0
		case []any:
			return fmt.Sprintf("<%d %s>", min(len(x), 1), key) // present or not, not how many lines a tool prints
		}
		return v
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalize(vol, loose, k, e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(vol, loose, "", e)
		}
		return out
	}
	return v
}
