package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/anthropic"
)

// TestRecordedFixture parses a stream shaped like the real API's (its
// documented fields, pings, HTML-sensitive characters, usage with cache
// details, extra fields the adapter does not know), served as it is.
func TestRecordedFixture(t *testing.T) {
	t.Parallel()
	fixture, err := os.ReadFile("testdata/fixture_tool_use.sse")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(fixture)
	}))
	t.Cleanup(ts.Close)
	a := anthropic.New(provider.Config{BaseURL: ts.URL, Getenv: func(string) string { return "k" }})
	resp, err := a.Call(context.Background(), provider.Request{Model: "claude-haiku-5-5", Transcript: a.InitTranscript("weather?")})
	if err != nil {
		t.Fatal(err)
	}
	// The response is a step result: through JSON and back, the native
	// entry is byte-identical (HTML-sensitive characters included).
	enc, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var back provider.Response
	if err := json.Unmarshal(enc, &back); err != nil {
		t.Fatal(err)
	}
	if string(back.Native) != string(resp.Native) {
		t.Errorf("native changed through JSON:\n%s\n%s", resp.Native, back.Native)
	}
	calls := resp.ToolCalls()
	if resp.Stop != provider.StopToolUse || len(calls) != 2 || string(calls[0].Input) != `{"location": "Paris"}` || calls[1].ID != "toolu_01Vw8hXU1FmNtMB5VXvn3eUb" {
		t.Fatalf("resp = %+v", resp)
	}
	if want := (provider.Usage{InputTokens: 412, OutputTokens: 131, CacheReadTokens: 2048, CacheWriteTokens: 1024}); resp.Usage != want {
		t.Errorf("usage = %+v", resp.Usage)
	}
	// 412×0.10 + 131×0.50 + 2048×0.01 + 1024×0.125 = 41.2+65.5+20.48+128 = 255.18 µ$
	if got := a.Price("claude-haiku-5-5", resp.Usage); got != 0.00025518 {
		t.Errorf("price = %v", got)
	}
	var native struct {
		Role    string
		Content []map[string]any
	}
	if err := json.Unmarshal(resp.Native, &native); err != nil {
		t.Fatal(err)
	}
	th := native.Content[0]
	if th["type"] != "thinking" || th["thinking"] != "The user wants the weather. I'll call the tool for <Paris> & <Rome>." ||
		th["signature"] != "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" {
		t.Errorf("thinking block = %v", th)
	}
	if len(native.Content) != 4 || native.Role != "assistant" {
		t.Errorf("native = %s", resp.Native)
	}
}

func serveSSE(t *testing.T, sse string) *anthropic.Adapter {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, sse)
	}))
	t.Cleanup(ts.Close)
	return anthropic.New(provider.Config{BaseURL: ts.URL, Getenv: func(string) string { return "k" },
		Retry: provider.RetryPolicy{Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }}})
}

// TestCutOffThinkingIsNotReplayed: output stopped by max_tokens in the
// middle of a thought leaves an unsigned thinking block and an empty text
// block; neither may go back to the API.
func TestCutOffThinkingIsNotReplayed(t *testing.T) {
	t.Parallel()
	a := serveSSE(t, `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-5-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: content_block_start
data: {"type":"content_block_start","index":1,"content_block":{"type":"thinking","thinking":"","signature":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"Let me think about this for a very long"}}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"max_tokens","stop_sequence":null},"usage":{"output_tokens":64000}}

event: message_stop
data: {"type":"message_stop"}

`)
	resp, err := a.Call(context.Background(), provider.Request{Model: "claude-haiku-5-5", Transcript: a.InitTranscript("x")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Stop != provider.StopMaxTokens || len(resp.Blocks) != 1 || resp.Blocks[0].Type != provider.BlockThinking {
		t.Fatalf("resp = %+v", resp)
	}
	if want := `{"role":"assistant","content":[{"type":"text","text":"[output truncated at max_tokens]"}]}`; string(resp.Native) != want {
		t.Errorf("native = %s", resp.Native)
	}
}

// TestStreamEndingEarlyIsRetried: a stream that stops before message_stop
// is a transient failure.
func TestStreamEndingEarlyIsRetried(t *testing.T) {
	t.Parallel()
	a := serveSSE(t, `event: message_start
data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}

`)
	_, err := a.Call(context.Background(), provider.Request{Model: "claude-haiku-5-5", Transcript: a.InitTranscript("x")})
	var pe *provider.ProviderError
	if !errors.As(err, &pe) || pe.Code != "truncated_stream" || !pe.Retryable {
		t.Fatalf("err = %v", err)
	}
}
