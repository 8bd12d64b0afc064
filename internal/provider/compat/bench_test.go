package compat_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/compat"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

const benchScript = `
name: bench
repeat: true
turns:
  - text: "Let me read the file and run the tests."
    tool_calls: [{name: read_file, input: {path: "internal/calc/calc.go"}}]
`

// BenchmarkCallOverhead measures request building and a whole Call against
// a server that answers a canned stream at once.
func BenchmarkCallOverhead(b *testing.B) {
	srv := scripttest.Start(b, benchScript)
	res, err := http.Post(srv.OpenAIBaseURL()+"/chat/completions", "application/json",
		strings.NewReader(`{"model":"script:bench","stream":true,"messages":[{"role":"user","content":"x"}]}`))
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
	a, err := compat.New(provider.Config{BaseURL: ts.URL + "/v1"})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{20, 200} {
		tr := a.InitTranscript("Fix the failing test. " + strings.Repeat("Context. ", 50))
		for range n {
			resp, err := a.Call(context.Background(), provider.Request{Model: "m", Transcript: tr})
			if err != nil {
				b.Fatal(err)
			}
			tr = a.AppendToolResults(provider.Append(tr, resp.Native), []provider.ToolResult{
				{CallID: resp.ToolCalls()[0].ID, Content: strings.Repeat("line of file content\n", 40)}})
		}
		req := provider.Request{Model: "m", System: strings.Repeat("system ", 500), Transcript: tr}
		b.Run(fmt.Sprintf("build/turns=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := a.Body(req); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("call/turns=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Call(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
