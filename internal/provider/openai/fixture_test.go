package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/openai"
)

// TestRecordedFixture parses a stream shaped like the real API's and
// checks that the encrypted reasoning item is kept for replay unchanged.
func TestRecordedFixture(t *testing.T) {
	t.Parallel()
	fixture, err := os.ReadFile("testdata/fixture_tools.sse")
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(fixture)
	}))
	t.Cleanup(ts.Close)
	a := openai.New(provider.Config{BaseURL: ts.URL + "/v1", Getenv: func(string) string { return "k" }})
	resp, err := a.Call(context.Background(), provider.Request{Model: "gpt-6-luna", Transcript: a.InitTranscript("weather?")})
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
	if resp.Stop != provider.StopToolUse || len(calls) != 2 || calls[1].ID != "call_Rome2" || string(calls[0].Input) != `{"location":"Paris"}` {
		t.Fatalf("resp = %+v", resp)
	}
	if resp.Blocks[0].Text != "**Checking weather** for <two> cities" || resp.Model != "gpt-6-luna-2026-10-01" {
		t.Errorf("blocks = %+v model %s", resp.Blocks, resp.Model)
	}
	if want := (provider.Usage{InputTokens: 500, OutputTokens: 80, CacheReadTokens: 1000}); resp.Usage != want {
		t.Errorf("usage = %+v", resp.Usage)
	}
	// 500×0.10 + 80×0.50 + 1000×0.01 = 50+40+10 = 100 µ$
	if got := a.Price("gpt-6-luna", resp.Usage); got != 0.0001 {
		t.Errorf("price = %v", got)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(resp.Native, &items); err != nil || len(items) != 3 {
		t.Fatalf("native = %s (%v)", resp.Native, err)
	}
	var reasoning struct {
		EncryptedContent string `json:"encrypted_content"`
	}
	_ = json.Unmarshal(items[0], &reasoning)
	if reasoning.EncryptedContent != "gAAAAABo_enc+/==" {
		t.Errorf("encrypted content = %q", reasoning.EncryptedContent)
	}
	var orig struct {
		Response struct{ Output []json.RawMessage }
	}
	for _, line := range bytes.Split(fixture, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && bytes.Contains(d, []byte(`"response.completed"`)) {
			_ = json.Unmarshal(d, &orig)
		}
	}
	var a1, b1 any
	_ = json.Unmarshal(orig.Response.Output[0], &a1)
	_ = json.Unmarshal(items[0], &b1)
	if ja, _ := json.Marshal(a1); string(ja) != func() string { jb, _ := json.Marshal(b1); return string(jb) }() {
		t.Errorf("reasoning item changed:\n%s\n%s", orig.Response.Output[0], items[0])
	}
}
