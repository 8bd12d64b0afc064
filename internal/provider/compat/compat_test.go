package compat_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/compat"
	"github.com/aos-run/aos/internal/provider/script"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

type bundle struct {
	srv *script.Server
	a   *compat.Adapter
}

func setup(t *testing.T, scriptYAML string, mods ...func(*provider.Config)) bundle {
	t.Helper()
	srv := scripttest.Start(t, scriptYAML)
	cfg := provider.Config{
		BaseURL: srv.OpenAIBaseURL(),
		Getenv:  func(string) string { return "" },
		Retry: provider.RetryPolicy{Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() },
			Jitter: func(d time.Duration) time.Duration { return d }},
		Models: []provider.ModelInfo{
			{ID: "script:tools", Tools: true},
			{ID: "script:priced", Tools: true, Price: provider.Price{Input: 0.5, Output: 1.5}},
			{ID: "tiny-no-tools", Tools: false},
		},
	}
	for _, m := range mods {
		m(&cfg)
	}
	a, err := compat.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return bundle{srv: srv, a: a}
}

const toolScript = `
scripts:
  - name: tools
    turns:
      - thinking: "plan"
        text: "Looking."
        tool_calls:
          - {name: read_file, input: {path: "a.go"}}
          - {name: shell, input: {command: "go test"}}
        usage: {input: 100, output: 20, cache_read: 50}
      - expect: [{tool_results: 2}, {last_tool_result_error: true}]
        text: "done"
  - {name: refuse, turns: [{refusal: {explanation: "nope"}}]}
  - name: cut
    turns: [{tool_calls: [{name: shell, input: {command: "a very long command line"}}], max_tokens: true}]
  - {name: notools, turns: [{error: {status: 400, message: "registry.ollama.ai/library/tiny does not support tools"}}]}
  - {name: stall, turns: [{text: "partial", stall: true}]}
`

func toolDefs() []provider.ToolDef {
	s := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":true}`)
	return []provider.ToolDef{{Name: "read_file", InputSchema: s}, {Name: "shell", InputSchema: s}}
}

func TestToolRoundTripWithReasoning(t *testing.T) {
	t.Parallel()
	b := setup(t, toolScript)
	ctx := context.Background()
	var reasoning strings.Builder
	tr := b.a.InitTranscript("fix")
	resp, err := b.a.Call(ctx, provider.Request{Model: "script:tools", System: "sys", Tools: toolDefs(), Transcript: tr,
		OnDelta: func(d provider.Delta) {
			if d.Type == provider.DeltaReasoning {
				reasoning.WriteString(d.Text)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.ToolCalls()
	if resp.Stop != provider.StopToolUse || len(calls) != 2 || calls[0].Name != "read_file" || string(calls[1].Input) != `{"command":"go test"}` {
		t.Fatalf("resp = %+v", resp)
	}
	if reasoning.String() != "plan" || resp.Blocks[0].Type != provider.BlockThinking {
		t.Errorf("reasoning = %q, blocks %+v", reasoning.String(), resp.Blocks)
	}
	if resp.Usage != (provider.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 50}) {
		t.Errorf("usage = %+v", resp.Usage)
	}
	tr = provider.Append(tr, resp.Native)
	tr = b.a.AppendToolResults(tr, []provider.ToolResult{{CallID: calls[0].ID, Content: "x"}, {CallID: calls[1].ID, Content: "fail", IsError: true}})
	if len(tr) != 4 {
		t.Fatalf("transcript has %d entries", len(tr))
	}
	resp, err = b.a.Call(ctx, provider.Request{Model: "script:tools", System: "sys", Tools: toolDefs(), Transcript: tr})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Blocks[0].Text != "done" || resp.Stop != provider.StopEndTurn {
		t.Errorf("resp = %+v", resp)
	}
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(b.srv.Requests()[1].Body, &body)
	if len(body.Messages) != 5 || !strings.Contains(string(body.Messages[0]), `"role":"system"`) {
		t.Errorf("messages = %s", body.Messages)
	}
}

func TestRefusalTruncationAndPrice(t *testing.T) {
	t.Parallel()
	b := setup(t, toolScript)
	ctx := context.Background()
	resp, err := b.a.Call(ctx, provider.Request{Model: "script:refuse", Transcript: b.a.InitTranscript("x")})
	if err != nil || resp.Stop != provider.StopRefusal || resp.Refusal.Explanation != "nope" {
		t.Fatalf("refusal: %+v %v", resp, err)
	}
	resp, err = b.a.Call(ctx, provider.Request{Model: "script:cut", Tools: toolDefs(), Transcript: b.a.InitTranscript("x")})
	if err != nil || resp.Stop != provider.StopMaxTokens || len(resp.ToolCalls()) != 0 || !resp.Blocks[0].Truncated {
		t.Fatalf("cut: %+v %v", resp, err)
	}
	if strings.Contains(string(resp.Native), "tool_calls") {
		t.Errorf("truncated call in native: %s", resp.Native)
	}
	if _, err := json.Marshal(resp); err != nil {
		t.Errorf("response with a truncated call does not encode: %v", err)
	}
	u := provider.Usage{InputTokens: 2_000_000, OutputTokens: 1_000_000}
	if got := b.a.Price("script:priced", u); got != 2.5 {
		t.Errorf("configured price = %v", got)
	}
	if got := b.a.Price("script:tools", u); got != 0 {
		t.Errorf("unpriced local model = %v", got)
	}
	if got := b.a.Price("gpt-6-luna", u); got != 0 {
		t.Errorf("catalogue model priced on a compat endpoint: %v", got)
	}
}

func TestCheckModel(t *testing.T) {
	t.Parallel()
	b := setup(t, toolScript)
	ctx := context.Background()
	if err := b.a.CheckModel(ctx, "tiny-no-tools"); !errors.Is(err, provider.ErrToolsUnsupported) {
		t.Errorf("configured no-tools: %v", err)
	}
	if err := b.a.CheckModel(ctx, "script:tools"); err != nil {
		t.Errorf("configured tools: %v", err)
	}
	err := b.a.CheckModel(ctx, "script:notools")
	if !errors.Is(err, provider.ErrToolsUnsupported) || !strings.Contains(err.Error(), "does not support tools") {
		t.Errorf("probed no-tools: %v", err)
	}
	if err := b.a.CheckModel(ctx, "script:echo"); err != nil {
		t.Errorf("probed echo: %v", err)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		turn      string
		status    int
		code      string
		retryable bool
		attempts  int
	}{
		{"rate limit", `{error: {status: 429, retry_after: 1s}}`, 429, "rate_limit_error", true, 6},
		{"unavailable", `{error: {status: 503}}`, 503, "overloaded_error", true, 6},
		{"server error", `{error: {status: 500}}`, 500, "api_error", true, 6},
		{"unauthorized", `{error: {status: 401}}`, 401, "invalid_api_key", false, 1},
		{"dropped connection", `{text: abc, error: {drop: true}}`, 0, "connection", true, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "name: e\nturns: ["+c.turn+"]\n")
			_, err := b.a.Call(context.Background(), provider.Request{Model: "script:e", Transcript: b.a.InitTranscript("x")})
			var pe *provider.ProviderError
			if !errors.As(err, &pe) || pe.Status != c.status || pe.Code != c.code || pe.Retryable != c.retryable ||
				pe.Attempts != c.attempts || pe.Provider != provider.Compat {
				t.Errorf("err = %v (%+v)", err, pe)
			}
		})
	}
	b := setup(t, "name: drop\nturns: [{text: abc, error: {drop: true, times: 1}}]\n")
	resp, err := b.a.Call(context.Background(), provider.Request{Model: "script:drop", Transcript: b.a.InitTranscript("x")})
	if err != nil || resp.Attempts != 2 {
		t.Errorf("drop then ok: %+v %v", resp, err)
	}
}

// TestOpenAIKeyNotSentToLocalEndpoint: the SDK reads OPENAI_API_KEY from the
// process environment by default; the compat adapter must not forward it.
func TestOpenAIKeyNotSentToLocalEndpoint(t *testing.T) {
	const key = "sk-proj-REAL-KEY-must-not-leak"
	t.Setenv("OPENAI_API_KEY", key) // the openai SDK itself reads the process environment; that is what is tested
	var mu sync.Mutex
	var auth []string
	inner := script.NewServer(nil, script.Options{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { _ = inner.Close() })
	a, err := compat.New(provider.Config{BaseURL: ts.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Call(context.Background(), provider.Request{Model: "llama", Transcript: a.InitTranscript("hi")}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range auth {
		if strings.Contains(h, key) {
			t.Errorf("OPENAI_API_KEY sent to the local endpoint")
		}
	}
}

func TestListModels(t *testing.T) {
	t.Parallel()
	b := setup(t, "models: [llama3]\nscripts: [{name: tools, turns: [{text: x}]}]\n")
	ms, err := b.a.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range ms {
		got[m.ID] = m.Available
	}
	if !got["script:tools"] || got["tiny-no-tools"] || !got["llama3"] {
		t.Errorf("models = %+v", ms)
	}
}

func TestStalledStreamIsAbandonedAndRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, toolScript, func(c *provider.Config) {
		c.IdleTimeout = 100 * time.Millisecond
		c.Retry.MaxAttempts = 2
	})
	_, err := b.a.Call(context.Background(), provider.Request{Model: "script:stall", Transcript: b.a.InitTranscript("x")})
	var pe *provider.ProviderError
	if !errors.As(err, &pe) || pe.Code != "stream_idle" || !pe.Retryable || pe.Attempts != 2 {
		t.Fatalf("err = %v", err)
	}
}
