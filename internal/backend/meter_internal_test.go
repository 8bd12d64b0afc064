package backend

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

// usageMeter reads the usage of every route the proxy charges, streamed
// and not, from the scripted model server's real wire formats.
func TestUsageMeterWireFormats(t *testing.T) {
	t.Parallel()
	srv := scripttest.Start(t, `
scripts:
  - name: u
    repeat: true
    turns:
      - text: hello there
        usage: {input: 1200, output: 340, cache_read: 50}
`)
	cases := []struct{ name, path, body string }{
		{"anthropic", "/v1/messages", `{"model":"script:u","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`},
		{"anthropic stream", "/v1/messages", `{"model":"script:u","max_tokens":100,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{"responses", "/v1/responses", `{"model":"script:u","input":"hi"}`},
		{"responses stream", "/v1/responses", `{"model":"script:u","input":"hi","stream":true}`},
		{"chat", "/v1/chat/completions", `{"model":"script:u","messages":[{"role":"user","content":"hi"}]}`},
		{"chat stream", "/v1/chat/completions", `{"model":"script:u","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("POST", srv.URL()+c.path, bytes.NewBufferString(c.body))
		req.Header.Set("content-type", "application/json")
		req.Header.Set("x-api-key", "k")
		req.Header.Set("authorization", "Bearer k")
		req.Header.Set("anthropic-version", "2023-06-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		m := &usageMeter{}
		_, _ = io.Copy(m, resp.Body)
		resp.Body.Close()
		u := m.usage()
		if resp.StatusCode != 200 || u.InputTokens != 1200 || u.OutputTokens != 340 || u.CacheReadTokens != 50 {
			t.Errorf("%s: status %d usage %+v, want 1200 in (uncached), 340 out, 50 cache read\n%.600s", c.name, resp.StatusCode, u, m.buf.String())
		}
	}
}
