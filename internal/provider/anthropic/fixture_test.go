package anthropic_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

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
