package compat_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/compat"
)

// TestRecordedFixture parses an Ollama-style stream: both tool calls whole
// in one chunk, usage in a chunk without choices.
func TestRecordedFixture(t *testing.T) {
	t.Parallel()
	fixture, err := os.ReadFile("testdata/fixture_ollama.sse")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(fixture)
	}))
	t.Cleanup(ts.Close)
	a, err := compat.New(provider.Config{BaseURL: ts.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.Call(context.Background(), provider.Request{Model: "qwen3:8b", Transcript: a.InitTranscript("read")})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.ToolCalls()
	if resp.Stop != provider.StopToolUse || len(calls) != 2 || calls[1].ID != "call_abc2" || string(calls[1].Input) != `{"path":"b.go"}` {
		t.Fatalf("resp = %+v", resp)
	}
	if resp.Blocks[0].Type != provider.BlockThinking || resp.Blocks[0].Text != "Need to read." {
		t.Errorf("reasoning = %+v", resp.Blocks[0])
	}
	if resp.Usage != (provider.Usage{InputTokens: 321, OutputTokens: 45}) || resp.Model != "qwen3:8b" {
		t.Errorf("usage = %+v model %s", resp.Usage, resp.Model)
	}
	want := `{"role":"assistant","content":"Reading \u003cboth\u003e files.","tool_calls":[{"id":"call_abc1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.go\"}"}},{"id":"call_abc2","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"b.go\"}"}}]}`
	if string(resp.Native) != want {
		t.Errorf("native = %s", resp.Native)
	}
}
