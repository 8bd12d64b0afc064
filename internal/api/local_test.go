package api_test

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/worker"
)

// localScript plays a local model: the scripted server lists qwen3-coder
// and answers it (and the creation probe) with the default script over
// Chat Completions; script:notools is a model the endpoint refuses tools to,
// as Ollama does.
const localScript = `
default: coder
models: [qwen3-coder, tiny]
scripts:
  - name: coder
    turns:
      - tool_calls: [{name: update_criteria, input: {updates: [{id: c1, passes: true, evidence: "checked locally"}]}}]
        usage: {input: 1000, output: 500}
      - expect: [{last_tool_result_error: false}]
        tool_calls: [{name: finish, input: {status: done, summary: "done on a local model", evidence: ["checked locally"], openQuestions: []}}]
  - {name: notools, turns: [{error: {status: 400, message: "registry.ollama.ai/library/tiny does not support tools"}}]}
`

type listedModel struct {
	ID        string
	Provider  string
	Available *bool
	Note      string
	Price     provider.Price
}

func listModels(t *testing.T, b *bundle) map[string]listedModel {
	t.Helper()
	code, body := b.do("GET", "/models", nil, b.read)
	if code != 200 {
		t.Fatalf("GET /models = %d %s", code, body)
	}
	var ms []listedModel
	if err := json.Unmarshal(body, &ms); err != nil {
		t.Fatal(err)
	}
	out := map[string]listedModel{}
	for _, m := range ms {
		if _, dup := out[m.ID]; dup {
			t.Errorf("%s listed twice", m.ID)
		}
		out[m.ID] = m
	}
	return out
}

// TestLocalModelMission: a "local:" model is listed live from the endpoint
// AOS_LOCAL_BASE_URL names, checked at creation through the API, and a
// mission on it runs to done through the real kernel worker and engine,
// the endpoint being sent the name without the prefix.
func TestLocalModelMission(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		srv := scripttest.Start(t, localScript)
		// qwen3-coder is priced by AOS_LOCAL_PRICES; tiny is not, so it costs 0.
		env := map[string]string{provider.EnvLocalBase: srv.OpenAIBaseURL(), provider.EnvLocalPrices: "qwen3-coder=1/2"}
		b := setup(t, db, setupOpts{env: env})
		ctx := context.Background()

		ms := listModels(t, b)
		m, ok := ms["local:qwen3-coder"]
		if !ok || m.Provider != "compat" || m.Available == nil || !*m.Available || m.Price != (provider.Price{Input: 1, Output: 2}) {
			t.Fatalf("local:qwen3-coder listed as %+v (found %v) in %v", m, ok, ms)
		}
		if m := ms["local:tiny"]; m.Available == nil || !*m.Available || !m.Price.IsZero() {
			t.Fatalf("local:tiny listed as %+v in %v", m, ms)
		}
		if _, dup := ms["local:local:qwen3-coder"]; dup {
			t.Errorf("a priced model is listed twice: %v", ms)
		}

		deps := worker.EngineDeps(b.k, t.TempDir(), nil, worker.Adapters(worker.AdapterOptions{Getenv: func(k string) string { return env[k] }}))
		wctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = b.k.RunWorker(wctx, kernel.WorkerConfig{Concurrency: 1, Logics: map[string]kernel.Logic{engine.LogicName: engine.AgentLogic(deps)}})
		}()
		t.Cleanup(func() { stop(); wg.Wait() })

		if err := demo.WriteRepo(filepath.Join(b.root, "repo")); err != nil {
			t.Fatal(err)
		}
		var mi mission.Mission
		b.ok("POST", "/missions", map[string]any{"objective": "check it", "criteria": []string{"it is checked"}, "workspace": "repo",
			"model": "local:qwen3-coder", "maxTurns": 5}, &mi)
		deadline := time.Now().Add(30 * time.Second)
		for mi.Status != kernel.StatusDone {
			if time.Now().After(deadline) || (mi.Status != kernel.StatusQueued && mi.Status != kernel.StatusRunning) {
				t.Fatalf("mission status %q, want done; result %s", mi.Status, mi.Result)
			}
			time.Sleep(20 * time.Millisecond)
			b.ok("GET", "/missions/"+mi.ID, nil, &mi)
		}
		// The first turn alone is 1000 input tokens at $1/M and 500 output
		// at $2/M; unpriced, the mission would cost 0.
		if mi.SpentUSD < 0.002 {
			t.Errorf("mission spent $%v, want at least $0.002 at the configured price", mi.SpentUSD)
		}
		chats := 0
		for _, r := range srv.Requests() {
			if r.Path != "/v1/chat/completions" {
				continue
			}
			chats++
			var body struct{ Model string }
			_ = json.Unmarshal(r.Body, &body)
			if body.Model != "qwen3-coder" {
				t.Errorf("the endpoint was sent model %q, want qwen3-coder", body.Model)
			}
		}
		if chats < 3 { // the creation probe, then two turns
			t.Errorf("%d chat completions requests, want the probe and two turns", chats)
		}
	})
}

// TestLocalModelRefusals: a model the endpoint refuses tools to, an
// endpoint that does not answer, and no endpoint at all are refused at
// creation with a clear error; the model list still answers, with the
// unreachable endpoint listed unavailable and why.
func TestLocalModelRefusals(t *testing.T) {
	srv := scripttest.Start(t, localScript)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close() // nothing listens there now

	b := setup(t, storetest.New(t, "sqlite"), setupOpts{env: map[string]string{provider.EnvLocalBase: srv.OpenAIBaseURL()}})
	b.workspace("repo")
	create := func(model string) (int, string) {
		code, body := b.do("POST", "/missions", map[string]any{"objective": "x", "workspace": "repo", "model": model}, b.write)
		return code, string(body)
	}
	if code, body := create("local:script:notools"); code != 400 || !strings.Contains(body, "cannot call tools") {
		t.Errorf("a model without tools: %d %s", code, body)
	}

	b.ok("PUT", "/settings", map[string]any{"localBaseUrl": dead}, nil) // the setting wins over the environment
	code, body := create("local:qwen3-coder")
	if code != 503 || !strings.Contains(body, "model_unavailable") || !strings.Contains(body, dead) || !strings.Contains(body, "did not answer") {
		t.Errorf("an unreachable endpoint: %d %s", code, body)
	}
	ms := listModels(t, b)
	if m := ms["local:*"]; m.Available == nil || *m.Available || !strings.Contains(m.Note, dead) {
		t.Errorf("unreachable endpoint listed as %+v", m)
	}
	if _, ok := ms["claude-opus-5-5"]; !ok {
		t.Errorf("an unreachable local endpoint hid the other models: %v", ms)
	}

	for _, bad := range []string{"ftp://host/v1", "http://user:pw@host/v1", "not a url", "http:///v1"} {
		b.fails("PUT", "/settings", map[string]any{"localBaseUrl": bad}, 400, "invalid_input")
	}
	b.ok("PUT", "/settings", map[string]any{"localBaseUrl": ""}, nil) // cleared: the environment's again
	b2 := setup(t, storetest.New(t, "sqlite"))
	b2.workspace("repo")
	code, body2 := b2.do("POST", "/missions", map[string]any{"objective": "x", "workspace": "repo", "model": "local:qwen3-coder"}, b2.write)
	if code != 503 || !strings.Contains(string(body2), provider.EnvLocalBase) {
		t.Errorf("no endpoint: %d %s", code, body2)
	}
}
