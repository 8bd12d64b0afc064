package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/anthropic"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

// benchScript answers every turn like a busy agent turn: thinking, text and
// a tool call.
const benchScript = `
name: bench
repeat: true
turns:
  - thinking: "I need to look at the failing test and the function it calls before changing anything; then run the suite."
    text: "Let me read the file and run the tests."
    tool_calls: [{name: read_file, input: {path: "internal/calc/calc.go"}}]
`

// transcript builds an n-turn transcript through real calls.
func transcript(b *testing.B, a *anthropic.Adapter, n int) provider.Transcript {
	b.Helper()
	tr := a.InitTranscript("Fix the failing test in internal/calc. " + strings.Repeat("Context. ", 50))
	result := strings.Repeat("line of file content\n", 40) // ~840 bytes
	for range n {
		resp, err := a.Call(context.Background(), provider.Request{Model: "script:bench", Tools: tools(), Transcript: tr})
		if err != nil {
			b.Fatal(err)
		}
		tr = provider.Append(tr, resp.Native)
		tr = a.AppendToolResults(tr, []provider.ToolResult{{CallID: resp.ToolCalls()[0].ID, Content: result}})
	}
	return tr
}

// BenchmarkRequestBuild measures building and encoding the request body:
// the adapter's per-call work before the network.
func BenchmarkRequestBuild(b *testing.B) {
	srv := scripttest.Start(b, benchScript)
	a := anthropic.New(provider.Config{BaseURL: srv.URL(), Getenv: func(string) string { return "k" }})
	for _, n := range []int{20, 200} {
		tr := transcript(b, a, n)
		req := provider.Request{Model: "claude-opus-5-5", System: strings.Repeat("system ", 500), Tools: tools(), Transcript: tr}
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			size := 0
			for b.Loop() {
				_, body, err := a.Body(req)
				if err != nil {
					b.Fatal(err)
				}
				size = len(body)
			}
			b.ReportMetric(float64(size), "body-bytes")
		})
	}
}

// BenchmarkCallOverhead measures a whole Call against a server that answers
// a canned stream at once: request building, the SDK, loopback HTTP, SSE
// parsing and accumulation — everything but the model.
func BenchmarkCallOverhead(b *testing.B) {
	srv := scripttest.Start(b, benchScript)
	a := anthropic.New(provider.Config{BaseURL: srv.URL(), Getenv: func(string) string { return "k" }})
	canned := cannedStream(b, srv.URL())
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(canned)
	}))
	b.Cleanup(ts.Close)
	fast := anthropic.New(provider.Config{BaseURL: ts.URL, Getenv: func(string) string { return "k" }})
	for _, n := range []int{20, 200} {
		tr := transcript(b, a, n)
		req := provider.Request{Model: "claude-opus-5-5", System: strings.Repeat("system ", 500), Tools: tools(), Transcript: tr}
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := fast.Call(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func cannedStream(b *testing.B, url string) []byte {
	b.Helper()
	body := `{"model":"script:bench","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"x"}]}`
	res, err := http.Post(url+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		b.Fatal(err)
	}
	return out
}
