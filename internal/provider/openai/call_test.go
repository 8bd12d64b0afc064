package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/provider"
)

var update = flag.Bool("update", false, "rewrite golden files")

func tools() []provider.ToolDef {
	return []provider.ToolDef{
		{Name: "read_file", Description: "Read a file.", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "shell", Description: "Run a command.", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)},
	}
}

func TestTextTurn(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	var deltas strings.Builder
	resp, err := b.a.Call(context.Background(), provider.Request{Model: "script:echo", Transcript: b.a.InitTranscript("hello"),
		OnDelta: func(d provider.Delta) { deltas.WriteString(d.Text) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Blocks) != 1 || resp.Blocks[0].Text != "echo: hello" || deltas.String() != "echo: hello" {
		t.Fatalf("blocks = %+v deltas = %q", resp.Blocks, deltas.String())
	}
	if resp.Stop != provider.StopEndTurn || resp.NativeStop != "completed" || resp.Attempts != 1 || resp.Usage.InputTokens == 0 {
		t.Errorf("resp = %+v", resp)
	}
}

const toolScript = `
name: tools
turns:
  - thinking: "Read then test."
    tool_calls:
      - {name: read_file, input: {path: "a.go"}}
      - {name: shell, input: {command: "go test ./..."}}
    usage: {input: 1000, output: 200, cache_read: 5000}
  - expect:
      - tool_results: 2
      - last_tool_result_contains: "exit code 0"
    text: "All good."
`

func TestParallelToolsAndEncryptedReasoningReplay(t *testing.T) {
	t.Parallel()
	b := setup(t, toolScript)
	ctx := context.Background()
	tr := b.a.InitTranscript("fix it")
	resp, err := b.a.Call(ctx, provider.Request{Model: "script:tools", Tools: tools(), Transcript: tr})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.ToolCalls()
	if resp.Stop != provider.StopToolUse || len(calls) != 2 || string(calls[1].Input) != `{"command":"go test ./..."}` {
		t.Fatalf("resp = %+v", resp)
	}
	if resp.Blocks[0].Type != provider.BlockThinking || resp.Blocks[0].Text != "Read then test." {
		t.Errorf("reasoning = %+v", resp.Blocks[0])
	}
	if want := (provider.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 5000}); resp.Usage != want {
		t.Errorf("usage = %+v", resp.Usage)
	}
	tr = provider.Append(tr, resp.Native)
	tr = b.a.AppendToolResults(tr, []provider.ToolResult{
		{CallID: calls[0].ID, Content: "package a"}, {CallID: calls[1].ID, Content: "[exit code 0]"},
	})
	if _, err := b.a.Call(ctx, provider.Request{Model: "script:tools", Tools: tools(), Transcript: tr}); err != nil {
		t.Fatal(err)
	}
	var body struct {
		Input []json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(b.srv.Requests()[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	var native []json.RawMessage
	if err := json.Unmarshal(resp.Native, &native); err != nil {
		t.Fatal(err)
	}
	if len(body.Input) != 1+len(native)+2 {
		t.Fatalf("input has %d items", len(body.Input))
	}
	for i, it := range native {
		if !bytes.Equal(body.Input[1+i], it) {
			t.Errorf("item %d changed on the wire:\n got %s\nwant %s", i, body.Input[1+i], it)
		}
	}
	if !bytes.Contains(native[0], []byte(`"encrypted_content":"enc_`)) {
		t.Errorf("reasoning item has no encrypted content: %s", native[0])
	}
}

func TestRefusalAndTruncation(t *testing.T) {
	t.Parallel()
	b := setup(t, `
scripts:
  - {name: refuse, turns: [{refusal: {explanation: "no"}}]}
  - name: cut
    turns:
      - tool_calls: [{name: read_file, input: {path: a}}, {name: shell, input: {command: "make everything"}}]
        max_tokens: true
`)
	ctx := context.Background()
	resp, err := b.a.Call(ctx, provider.Request{Model: "script:refuse", Transcript: b.a.InitTranscript("x")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Stop != provider.StopRefusal || resp.Refusal == nil || resp.Refusal.Explanation != "no" {
		t.Errorf("refusal resp = %+v", resp)
	}
	resp, err = b.a.Call(ctx, provider.Request{Model: "script:cut", Tools: tools(), Transcript: b.a.InitTranscript("x")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Stop != provider.StopMaxTokens || len(resp.ToolCalls()) != 1 || !resp.Blocks[1].Truncated || resp.NativeStop != "incomplete:max_output_tokens" {
		t.Errorf("cut resp = %+v", resp)
	}
	if bytes.Contains(resp.Native, []byte("make everything")) || bytes.Contains(resp.Native, []byte(`"shell"`)) {
		t.Errorf("truncated call in native: %s", resp.Native)
	}
	if _, err := json.Marshal(resp); err != nil {
		t.Errorf("response with a truncated call does not encode: %v", err)
	}
}

func TestErrorMapping(t *testing.T) {
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
		{"overloaded", `{error: {status: 529}}`, 529, "overloaded_error", true, 6},
		{"server error", `{error: {status: 500}}`, 500, "api_error", true, 6},
		{"invalid key", `{error: {status: 401}}`, 401, "invalid_api_key", false, 1},
		{"dropped connection", `{text: "abc", error: {drop: true}}`, 0, "connection", true, 6},
		{"server error mid-stream", `{text: "abc", error: {status: 500, mid_stream: true}}`, 0, "server_error", true, 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "name: e\nturns: ["+tc.turn+"]\n")
			_, err := b.a.Call(context.Background(), provider.Request{Model: "script:e", Transcript: b.a.InitTranscript("x")})
			var pe *provider.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v", err)
			}
			if pe.Status != tc.status || pe.Code != tc.code || pe.Retryable != tc.retryable || pe.Attempts != tc.attempts {
				t.Errorf("got %d %s %v %d, want %d %s %v %d (%v)", pe.Status, pe.Code, pe.Retryable, pe.Attempts,
					tc.status, tc.code, tc.retryable, tc.attempts, err)
			}
		})
	}
}

func TestMissingKey(t *testing.T) {
	t.Parallel()
	b := setup(t, "", func(c *provider.Config) { c.Getenv = func(string) string { return "" } })
	_, err := b.a.Call(context.Background(), provider.Request{Model: "gpt-6-luna", Transcript: b.a.InitTranscript("x")})
	var mk *provider.MissingKeyError
	if !errors.As(err, &mk) || mk.EnvVar != "OPENAI_API_KEY" {
		t.Fatalf("err = %v", err)
	}
}

func TestRequestShape(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	tr := b.a.AppendOperatorNote(b.a.InitTranscript("hi"), "gpt-6.1-sol", "wrap up")
	if _, err := b.a.Call(context.Background(), provider.Request{Model: "gpt-6.1-sol", Effort: provider.EffortMedium,
		System: "You are aos.", Tools: tools(), Transcript: tr}); err != nil {
		t.Fatal(err)
	}
	body := b.srv.Requests()[0].Body
	var pretty bytes.Buffer
	_ = json.Indent(&pretty, body, "", "  ")
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", "request.golden.json")
	if *update {
		_ = os.WriteFile(path, pretty.Bytes(), 0o644)
	}
	want, _ := os.ReadFile(path)
	if !bytes.Equal(pretty.Bytes(), want) {
		t.Errorf("request differs from golden:\n%s", pretty.Bytes())
	}
	var req map[string]any
	_ = json.Unmarshal(body, &req)
	reasoning, _ := req["reasoning"].(map[string]any)
	checks := map[string]bool{
		"store false":             req["store"] == false,
		"no previous_response_id": req["previous_response_id"] == nil,
		"streamed":                req["stream"] == true,
		"parallel tool calls":     req["parallel_tool_calls"] == true,
		"encrypted reasoning":     fmt.Sprint(req["include"]) == "[reasoning.encrypted_content]",
		"effort mapped":           reasoning["effort"] == "medium",
		"summary requested":       reasoning["summary"] == "auto",
		"strict tools":            strings.Contains(string(body), `"strict":true`),
		"developer note":          strings.Contains(string(body), `"role":"developer"`),
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("request: %s: not so", name)
		}
	}
}

func TestListModels(t *testing.T) {
	t.Parallel()
	b := setup(t, "models: [gpt-6-luna]\nscripts: []\n")
	models, err := b.a.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	avail := map[string]bool{}
	for _, m := range models {
		avail[m.ID] = m.Available
	}
	if !avail["gpt-6-luna"] || avail["gpt-6-astra"] || len(avail) < 4 {
		t.Errorf("models = %+v", models)
	}
}

func TestScriptedModelNeedsNoKey(t *testing.T) {
	t.Parallel()
	b := setup(t, "", func(c *provider.Config) {
		env := map[string]string{provider.EnvOpenAIBase: c.Env(provider.EnvOpenAIBase)}
		c.Getenv = func(k string) string { return env[k] }
	})
	resp, err := b.a.Call(context.Background(), provider.Request{Model: "script:echo", Transcript: b.a.InitTranscript("hi")})
	if err != nil || resp.Blocks[0].Text != "echo: hi" {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
}

func TestOperatorNoteAndSteeringReachTheModel(t *testing.T) {
	t.Parallel()
	b := setup(t, `
name: n
turns:
  - text: "working"
  - expect: [{operator_note_contains: "budget at 90%"}, {last_user_contains: "also update the docs"}]
    text: "ok"
`)
	ctx := context.Background()
	tr := b.a.InitTranscript("go")
	resp, err := b.a.Call(ctx, provider.Request{Model: "script:n", Transcript: tr})
	if err != nil {
		t.Fatal(err)
	}
	tr = provider.Append(tr, resp.Native)
	tr = b.a.AppendOperatorNote(tr, "script:n", "budget at 90%")
	tr = b.a.AppendUser(tr, "also update the docs")
	if _, err := b.a.Call(ctx, provider.Request{Model: "script:n", Transcript: tr}); err != nil {
		t.Fatal(err)
	}
}

func TestStalledStreamIsAbandonedAndRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, "name: s\nturns: [{text: partial, stall: true}]\n", func(c *provider.Config) {
		c.IdleTimeout = 100 * time.Millisecond
		c.Retry.MaxAttempts = 2
	})
	_, err := b.a.Call(context.Background(), provider.Request{Model: "script:s", Transcript: b.a.InitTranscript("x")})
	var pe *provider.ProviderError
	if !errors.As(err, &pe) || pe.Code != "stream_idle" || !pe.Retryable || pe.Attempts != 2 {
		t.Fatalf("err = %v", err)
	}
}
