package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/metrics"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/worker"
)

const metricsScript = `
default: coder
models: [qwen3-coder]
scripts:
  - name: coder
    turns:
      - tool_calls: [{name: shell, input: {command: "echo metered", timeoutSec: 10}}]
        usage: {input: 100, output: 20}
      - expect: [{last_tool_result_contains: "metered"}]
        tool_calls: [{name: update_criteria, input: {updates: [{id: c1, passes: true, evidence: "the shell printed it"}]}}]
        usage: {input: 150, output: 10}
      - tool_calls: [{name: finish, input: {status: done, summary: "metered", evidence: ["the shell printed it"], openQuestions: []}}]
        usage: {input: 200, output: 5}
`

// scrape reads GET /metrics from the server at url (as a loopback peer)
// and parses it with Prometheus's own text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + api.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics = %d", resp.StatusCode)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return fams
}

// value returns the value of the series of name whose labels include
// want, and whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if have[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsShowTheMission: a mission run through the API and the real
// worker (local model, real sandbox) shows up in the server's /metrics and
// the worker's, which parse with the Prometheus text parser and share no
// aos metric: the run by state, its steps, the model
// calls with their tokens, the sandboxed command, the claim, the spend,
// the events sent to a socket, and a refused login.
func TestMetricsShowTheMission(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		srv := scripttest.Start(t, metricsScript)
		env := map[string]string{provider.EnvLocalBase: srv.OpenAIBaseURL()}
		m := metrics.New(metrics.ProcessServer, "test")
		m.WatchStore(db.Store)
		b := setup(t, db, setupOpts{env: env, api: api.Options{Metrics: m}})
		ctx := context.Background()
		// The worker's own metrics, served as the worker serves them.
		wm := metrics.New(metrics.ProcessWorker, "test")
		wsrv := httptest.NewServer(metrics.LocalOnly(wm.Handler()))
		t.Cleanup(wsrv.Close)

		before := scrape(t, b.srv.URL)
		if v, ok := value(before, "aos_build_info", map[string]string{"process": "server", "version": "test"}); !ok || v != 1 {
			t.Fatalf("aos_build_info = %v %v", v, ok)
		}

		dataDir := t.TempDir()
		sb, err := sandbox.New(sandbox.Config{DataDir: dataDir})
		if err != nil {
			t.Fatal(err)
		}
		// The worker (its own kernel, metrics and JSON log) shares the
		// database, as aos worker beside aos server does.
		wlogs := &syncBuffer{}
		wlog := slog.New(slog.NewJSONHandler(wlogs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		k := kernel.New(db.Store, kernel.Options{DataDir: dataDir, Poll: 20 * time.Millisecond, Observer: wm, Logger: wlog})
		deps := worker.EngineDeps(k, dataDir, worker.ObserveCommands(sb, wm),
			worker.Adapters(worker.AdapterOptions{Getenv: func(k string) string { return env[k] }, Observer: wm}))
		wctx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = k.RunWorker(wctx, kernel.WorkerConfig{Concurrency: 1, Logics: map[string]kernel.Logic{engine.LogicName: engine.AgentLogic(deps)}})
		}()
		t.Cleanup(func() { stop(); wg.Wait() })

		if err := demo.WriteRepo(filepath.Join(b.root, "repo")); err != nil {
			t.Fatal(err)
		}
		b.ok("POST", "/policy/rules", map[string]any{"tool": "shell", "commandPrefix": "echo", "decision": "allow"}, nil)
		var mi mission.Mission
		b.ok("POST", "/missions", map[string]any{"objective": "meter it", "criteria": []string{"it is metered"}, "workspace": "repo",
			"model": "local:qwen3-coder", "maxTurns": 5}, &mi)
		c := b.dial(ctx, "?cursor=0&missionId="+mi.ID)
		deadline := time.Now().Add(60 * time.Second)
		for mi.Status != kernel.StatusDone {
			if time.Now().After(deadline) || (mi.Status != kernel.StatusQueued && mi.Status != kernel.StatusRunning) {
				t.Fatalf("mission status %q, want done; result %s", mi.Status, mi.Result)
			}
			time.Sleep(20 * time.Millisecond)
			b.ok("GET", "/missions/"+mi.ID, nil, &mi)
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if _, _, err := c.Read(rctx); err != nil { // at least one event went out
			t.Fatal(err)
		}
		b.setUpOwner()
		code, _ := b.do("POST", "/auth/login", map[string]any{"password": "wrong password", "totpCode": "000000"}, "")
		if code != 401 {
			t.Fatalf("a wrong login answered %d", code)
		}

		checkRunLogs(t, wlogs.String(), mi, []string{"meter it", "echo metered", "the shell printed it"})

		got := scrape(t, b.srv.URL)
		for name, f := range scrape(t, wsrv.URL) {
			if got[name] != nil && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") && !strings.HasPrefix(name, "promhttp_") &&
				name != "aos_build_info" {
				t.Errorf("%s is exported by both the server and the worker", name)
			}
			got[name] = f
		}
		model := map[string]string{"provider": "compat", "model": "local:qwen3-coder"}
		checks := []struct {
			name  string
			label map[string]string
			min   float64
		}{
			{"aos_runs", map[string]string{"state": "done"}, 1},
			{"aos_missions", map[string]string{"state": "done"}, 1},
			{"aos_steps", map[string]string{"kind": "model_call", "status": "completed"}, 3},
			{"aos_model_calls_total", map[string]string{"provider": "compat", "model": "local:qwen3-coder", "outcome": "ok"}, 3},
			{"aos_model_call_duration_seconds", model, 3},
			{"aos_model_tokens_total", map[string]string{"provider": "compat", "model": "local:qwen3-coder", "kind": "input"}, 450},
			{"aos_model_tokens_total", map[string]string{"provider": "compat", "model": "local:qwen3-coder", "kind": "output"}, 35},
			{"aos_sandbox_commands_total", map[string]string{"outcome": "ok"}, 1},
			{"aos_sandbox_command_duration_seconds", nil, 1},
			{"aos_kernel_claims_total", map[string]string{"logic": engine.LogicName}, 1},
			{"aos_kernel_claim_latency_seconds", map[string]string{"logic": engine.LogicName}, 1},
			{"aos_kernel_lease_losses_total", nil, 0},
			{"aos_kernel_reconcile_asks_total", nil, 0},
			{"aos_spend_usd_total", nil, 0},
			{"aos_ws_events_sent_total", nil, 1},
			{"aos_ws_clients", nil, 1},
			{"aos_auth_login_refusals_total", map[string]string{"method": "password"}, 1},
			{"aos_store_up", nil, 1},
		}
		for _, c := range checks {
			v, ok := value(got, c.name, c.label)
			if c.min == 0 && c.name != "aos_spend_usd_total" && c.name != "aos_kernel_reconcile_asks_total" {
				continue // a vector without a series yet: nothing to read
			}
			if !ok || v < c.min {
				t.Errorf("%s%v = %v (present %v), want ≥ %v", c.name, c.label, v, ok, c.min)
			}
		}
		if v, _ := value(before, "aos_runs", map[string]string{"state": "done"}); v != 0 {
			t.Errorf("before the mission aos_runs{state=done} = %v", v)
		}
	})
}

// TestMetricsRefused: /metrics is served to a loopback peer with no proxy
// headers, and otherwise only to a bearer API token.
func TestMetricsRefused(t *testing.T) {
	m := metrics.New(metrics.ProcessServer, "test")
	b := setup(t, storetest.New(t, "sqlite"), setupOpts{api: api.Options{Metrics: m}})
	cases := []struct {
		name   string
		remote string
		header http.Header
		want   int
	}{
		{"loopback", "127.0.0.1:5000", nil, 200},
		{"loopback v6", "[::1]:5000", nil, 200},
		{"remote without a token", "192.0.2.7:5000", nil, 403},
		{"forwarded by a local proxy", "127.0.0.1:5000", http.Header{"X-Forwarded-For": {"192.0.2.7"}}, 403},
		{"forwarded (RFC 7239)", "127.0.0.1:5000", http.Header{"Forwarded": {"for=192.0.2.7"}}, 403},
		{"remote with a bad token", "192.0.2.7:5000", http.Header{"Authorization": {"Bearer aos_nope"}}, 401},
		{"remote with a read token", "192.0.2.7:5000", http.Header{"Authorization": {"Bearer " + b.read}}, 200},
		{"rebound domain", "127.0.0.1:5000", http.Header{"Host": {"evil.example:8640"}}, 403},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", api.MetricsPath, nil)
			r.Host = "127.0.0.1:8640"
			if h := c.header.Get("Host"); h != "" {
				r.Host = h
				c.header.Del("Host")
			}
			r.RemoteAddr = c.remote
			for k, v := range c.header {
				r.Header[k] = v
			}
			w := httptest.NewRecorder()
			b.api.ServeHTTP(w, r)
			if w.Code != c.want {
				t.Fatalf("%s: %d %s, want %d", c.name, w.Code, w.Body, c.want)
			}
			if c.want == 200 && !strings.Contains(w.Body.String(), "aos_build_info") {
				t.Errorf("%s: no aos_build_info in %q", c.name, w.Body.String())
			}
		})
	}
	if code, _ := b.do("GET", "/health", nil, ""); code != 200 {
		t.Errorf("health = %d", code)
	}
	// A server without metrics serves none.
	b2 := setup(t, storetest.New(t, "sqlite"))
	b2.do("GET", "/health", nil, "")
	resp, err := http.Get(b2.srv.URL + api.MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("a server without metrics answered /metrics with %d", resp.StatusCode)
	}
}

// checkRunLogs: every log line is JSON; every line that concerns the
// mission's run (holds its id anywhere) names both the mission and the run
// in their own attributes; and no line holds the objective, a command or
// the model's output.
func checkRunLogs(t *testing.T, logs string, mi mission.Mission, never []string) {
	t.Helper()
	concern := 0
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		for _, s := range never {
			if strings.Contains(line, s) {
				t.Errorf("log line holds %q: %s", s, line)
			}
		}
		if !strings.Contains(line, mi.RootRunID) && !strings.Contains(line, mi.ID) {
			continue
		}
		concern++
		if rec["run"] != mi.RootRunID || rec["mission"] != mi.ID {
			t.Errorf("log line about the run without its mission and run ids: %s", line)
		}
	}
	if concern < 2 {
		t.Errorf("%d log lines about the run, want its claim and its end:\n%s", concern, logs)
	}
}
