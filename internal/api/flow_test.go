package api_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/worker"
)

const flowScript = `name: test
turns:
  - tool_calls: [{name: shell, input: {command: "echo hello from the sandbox", timeoutSec: 10}}]
  - expect: [{last_tool_result_contains: "hello from the sandbox"}]
    tool_calls:
      - {name: finish, input: {status: partial, summary: "said hello", evidence: [], openQuestions: []}}
`

// TestFullFlow drives a mission through the API only: create it (scripted
// model, real kernel worker, real sandbox, real git), watch it over the
// WebSocket, approve its shell call with POST /waits/{id}/resolve when the
// wait.created event arrives, and see it end. The fake provider keys the
// SDKs send must appear in no response and no event.
func TestFullFlow(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		// The server's environment points scripted models at the scripted
		// model server, as `aos up` beside `aos dev model-server` would.
		srv := scripttest.Start(t, flowScript)
		b := setup(t, db, setupOpts{env: map[string]string{"ANTHROPIC_BASE_URL": srv.URL()}})
		ctx := context.Background()
		repo := filepath.Join(b.root, "repo")
		if err := demo.WriteRepo(repo); err != nil {
			t.Fatal(err)
		}
		dataDir := t.TempDir()
		sb, err := sandbox.New(sandbox.Config{DataDir: dataDir})
		if err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"ANTHROPIC_API_KEY": fakeAnthropicKey, "OPENAI_API_KEY": fakeOpenAIKey}
		deps := worker.EngineDeps(b.k, dataDir, sb, worker.AdapterFunc(srv.URL(), func(k string) string { return env[k] }))
		wctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = b.k.RunWorker(wctx, kernel.WorkerConfig{Concurrency: 1, Logics: map[string]kernel.Logic{engine.LogicName: engine.AgentLogic(deps)},
				JanitorEvery: 50 * time.Millisecond})
		}()
		t.Cleanup(func() { stop(); wg.Wait() })

		var m mission.Mission
		b.ok("POST", "/missions", map[string]any{"objective": "say hello", "criteria": []string{"it says hello"}, "workspace": "repo",
			"model": "script:test", "network": "open", "budgetUsd": 0.1, "maxTurns": 10}, &m)
		c := b.dial(ctx, "?cursor=0&missionId="+m.ID)
		approved := false
		deadline := time.Now().Add(60 * time.Second)
		for {
			if time.Now().After(deadline) {
				t.Fatal("the mission did not end")
			}
			e := b.next(ctx, c)
			if e.Kind == "wait.created" && !approved {
				var p struct {
					WaitID string `json:"waitId"`
					Kind   string `json:"kind"`
				}
				if err := json.Unmarshal(e.Payload, &p); err != nil || p.Kind != "approval" {
					t.Fatalf("wait.created %s", e.Payload)
				}
				var w mission.Wait
				b.ok("POST", "/waits/"+p.WaitID+"/resolve", map[string]any{"approved": true}, &w)
				approved = true
			}
			if e.Kind == "run.completed" && e.RunID == m.RootRunID {
				break
			}
		}
		b.ok("GET", "/missions/"+m.ID, nil, &m)
		if !approved || m.Status != kernel.StatusPartial {
			t.Fatalf("approved %v, mission %s", approved, m.Status)
		}
		var steps []mission.Step
		b.ok("GET", "/runs/"+m.RootRunID+"/steps", nil, &steps)
		var shell bool
		for _, s := range steps {
			if s.Kind == "model_call" && strings.Contains(string(s.Result), `"native"`) {
				t.Errorf("native in step %d", s.Seq)
			}
			shell = shell || s.Kind == "tool_call" && s.Name == "shell" && strings.Contains(string(s.Result), "hello from the sandbox")
		}
		if !shell {
			t.Fatalf("no shell step with the output in %d steps", len(steps))
		}
	})
}
