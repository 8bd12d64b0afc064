package openai_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/openai"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

const benchScript = `
name: bench
repeat: true
turns:
  - thinking: "I need to look at the failing test and the function it calls before changing anything; then run the suite."
    text: "Let me read the file and run the tests."
    tool_calls: [{name: read_file, input: {path: "internal/calc/calc.go"}}]
`

func transcript(b *testing.B, a *openai.Adapter, n int) provider.Transcript {
	b.Helper()
	tr := a.InitTranscript("Fix the failing test in internal/calc. " + strings.Repeat("Context. ", 50))
	result := strings.Repeat("line of file content\n", 40)
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

// BenchmarkRequestBuild measures building and encoding the request body.
func BenchmarkRequestBuild(b *testing.B) {
	srv := scripttest.Start(b, benchScript)
	a := openai.New(provider.Config{BaseURL: srv.OpenAIBaseURL(), Getenv: func(string) string { return "k" }})
	for _, n := range []int{20, 200} {
		req := provider.Request{Model: "gpt-6.1-sol", System: strings.Repeat("system ", 500), Tools: tools(), Transcript: transcript(b, a, n)}
		b.Run(fmt.Sprintf("turns=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := a.Body(req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCallOverhead measures a whole Call against a server that answers
// a canned stream at once: everything but the model.
func BenchmarkCallOverhead(b *testing.B) {
	srv := scripttest.Start(b, benchScript)
	a := openai.New(provider.Config{BaseURL: srv.OpenAIBaseURL(), Getenv: func(string) string { return "k" }})
	res, err := http.Post(srv.OpenAIBaseURL()+"/responses", "application/json",
		strings.NewReader(`{"model":"script:bench","stream":true,"input":"x"}`))
	if err != nil {
		b.Fatal(err)
	}
	canned, _ := io.ReadAll(res.Body)
	res.Body.Close()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(canned)
	}))
	b.Cleanup(ts.Close)
	fast := openai.New(provider.Config{BaseURL: ts.URL + "/v1", Getenv: func(string) string { return "k" }})
	for _, n := range []int{20, 200} {
		req := provider.Request{Model: "gpt-6.1-sol", System: strings.Repeat("system ", 500), Tools: tools(), Transcript: transcript(b, a, n)}
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
