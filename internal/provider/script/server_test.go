package script

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func start(t *testing.T, yaml string) *Server {
	t.Helper()
	return StartForTest(t, yaml)
}

func post(t *testing.T, url, body string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

const richScript = `
scripts:
  - name: rich
    turns:
      - thinking: "Let me look at the failing test first."
        text: "I'll read the file and run the tests."
        tool_calls:
          - {name: read_file, input: {path: "calc.go"}}
          - {name: shell, input: {command: "go test ./..."}}
        usage: {input: 120, output: 45, cache_read: 30, cache_write: 10}
  - name: two
    turns: [{text: "first"}, {text: "second"}]
`

// Requests for turn 0 of "rich" in each format.
var firstRequests = map[Format]struct{ path, body string }{
	FormatAnthropic: {"/v1/messages", `{"model":"script:rich","max_tokens":100,"stream":true,"messages":[{"role":"user","content":[{"type":"text","text":"fix"}]}]}`},
	FormatResponses: {"/v1/responses", `{"model":"script:rich","stream":true,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"fix"}]}]}`},
	FormatChat:      {"/v1/chat/completions", `{"model":"script:rich","stream":true,"messages":[{"role":"user","content":"fix"}]}`},
}

type sseEvent struct {
	name string
	data string
}

func parseSSE(t *testing.T, s string) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	return out
}

// TestGoldenStreams keeps each format's stream for a rich turn as a golden
// file, and checks it is stable (the server is a pure function).
func TestGoldenStreams(t *testing.T) {
	t.Parallel()
	srv := start(t, richScript)
	for f, r := range firstRequests {
		t.Run(string(f), func(t *testing.T) {
			status, hdr, body := post(t, srv.URL()+r.path, r.body)
			if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
				t.Fatalf("status %d, content-type %q: %s", status, hdr.Get("Content-Type"), body)
			}
			path := filepath.Join("testdata", "golden", string(f)+".sse")
			if *update {
				if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("golden (run with -update): %v", err)
			}
			if body != string(want) {
				t.Errorf("stream differs from %s:\n%s", path, body)
			}
			_, _, again := post(t, srv.URL()+r.path, r.body)
			if again != body {
				t.Errorf("same request, different answer")
			}
		})
	}
}

// required lists, per event type, the fields the providers' API
// references document as always present (dotted paths into the data).
var required = map[Format]map[string][]string{
	FormatAnthropic: {
		"message_start": {"type", "message.id", "message.type", "message.role", "message.content", "message.model",
			"message.stop_reason", "message.stop_sequence", "message.usage.input_tokens", "message.usage.output_tokens"},
		"ping":                {"type"},
		"content_block_start": {"type", "index", "content_block.type"},
		"content_block_delta": {"type", "index", "delta.type"},
		"content_block_stop":  {"type", "index"},
		"message_delta":       {"type", "delta.stop_reason", "delta.stop_sequence", "usage.output_tokens"},
		"message_stop":        {"type"},
	},
	FormatResponses: {
		"response.created":                       {"type", "sequence_number", "response.id", "response.object", "response.created_at", "response.status", "response.model", "response.output"},
		"response.in_progress":                   {"type", "sequence_number", "response.id", "response.status"},
		"response.output_item.added":             {"type", "sequence_number", "output_index", "item.id", "item.type"},
		"response.output_item.done":              {"type", "sequence_number", "output_index", "item.id", "item.type"},
		"response.reasoning_summary_part.added":  {"type", "sequence_number", "item_id", "output_index", "summary_index", "part.type"},
		"response.reasoning_summary_text.delta":  {"type", "sequence_number", "item_id", "output_index", "summary_index", "delta"},
		"response.reasoning_summary_text.done":   {"type", "sequence_number", "item_id", "output_index", "summary_index", "text"},
		"response.reasoning_summary_part.done":   {"type", "sequence_number", "item_id", "output_index", "summary_index", "part.text"},
		"response.content_part.added":            {"type", "sequence_number", "item_id", "output_index", "content_index", "part.type"},
		"response.content_part.done":             {"type", "sequence_number", "item_id", "output_index", "content_index", "part.type"},
		"response.output_text.delta":             {"type", "sequence_number", "item_id", "output_index", "content_index", "delta"},
		"response.output_text.done":              {"type", "sequence_number", "item_id", "output_index", "content_index", "text"},
		"response.function_call_arguments.delta": {"type", "sequence_number", "item_id", "output_index", "delta"},
		"response.function_call_arguments.done":  {"type", "sequence_number", "item_id", "output_index", "arguments"},
		"response.completed":                     {"type", "sequence_number", "response.id", "response.status", "response.output", "response.usage.input_tokens", "response.usage.output_tokens", "response.usage.input_tokens_details.cached_tokens"},
	},
	FormatChat: {
		"chunk": {"id", "object", "created", "model", "choices"},
	},
}

func has(v any, path string) bool {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		if v, ok = m[k]; !ok {
			return false
		}
	}
	return true
}

// TestStreamShapes checks the streams against the documented shapes.
func TestStreamShapes(t *testing.T) {
	t.Parallel()
	srv := start(t, richScript)
	for f, r := range firstRequests {
		t.Run(string(f), func(t *testing.T) {
			_, _, body := post(t, srv.URL()+r.path, r.body)
			events := parseSSE(t, body)
			if len(events) < 5 {
				t.Fatalf("only %d events", len(events))
			}
			for i, ev := range events {
				if f == FormatChat && ev.data == "[DONE]" {
					if i != len(events)-1 {
						t.Errorf("[DONE] is not last")
					}
					continue
				}
				var data map[string]any
				if err := json.Unmarshal([]byte(ev.data), &data); err != nil {
					t.Fatalf("event %d: %v: %s", i, err, ev.data)
				}
				key := ev.name
				switch f {
				case FormatChat:
					if ev.name != "" {
						t.Errorf("chat event has a name %q", ev.name)
					}
					key = "chunk"
					if data["object"] != "chat.completion.chunk" {
						t.Errorf("object = %v", data["object"])
					}
				default:
					if ev.name != data["type"] {
						t.Errorf("event %d: name %q, type %v", i, ev.name, data["type"])
					}
				}
				if f == FormatResponses && data["sequence_number"] != float64(i) {
					t.Errorf("event %d: sequence_number %v", i, data["sequence_number"])
				}
				fields, ok := required[f][key]
				if !ok {
					t.Errorf("event %q is not a documented event", key)
					continue
				}
				for _, p := range fields {
					if !has(data, p) {
						t.Errorf("%s: missing %s in %s", key, p, ev.data)
					}
				}
			}
			last := events[len(events)-1]
			switch f {
			case FormatAnthropic:
				if last.name != "message_stop" {
					t.Errorf("last event %q", last.name)
				}
			case FormatResponses:
				if last.name != "response.completed" {
					t.Errorf("last event %q", last.name)
				}
			case FormatChat:
				if last.data != "[DONE]" {
					t.Errorf("last event %q", last.data)
				}
			}
		})
	}
}

func TestNonStreamingAnswers(t *testing.T) {
	t.Parallel()
	srv := start(t, richScript)
	cases := []struct {
		path, body, want string
	}{
		{"/v1/messages", `{"model":"x","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}`, `"text":"echo: hi"`},
		{"/v1/responses", `{"model":"x","input":"hi"}`, `"text":"echo: hi"`},
		{"/v1/chat/completions", `{"model":"x","messages":[{"role":"user","content":"hi"}]}`, `"content":"echo: hi"`},
	}
	for _, c := range cases {
		status, _, body := post(t, srv.URL()+c.path, c.body)
		if status != 200 || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s", c.path, status, body)
		}
	}
}

func TestScriptSelectionAndTurnIndex(t *testing.T) {
	t.Parallel()
	srv := start(t, richScript)
	cases := []struct {
		name, path, body, want string
		status                 int
	}{
		{"by model", "/v1/messages", `{"model":"script:two","messages":[{"role":"user","content":"a"}]}`, `"first"`, 200},
		{"by tag", "/v1/messages", `{"model":"claude-opus-5-5","messages":[{"role":"user","content":"[script:two] go"}]}`, `"first"`, 200},
		{"default echo", "/v1/messages", `{"model":"claude-opus-5-5","messages":[{"role":"user","content":"go"}]}`, `echo: go`, 200},
		{"unknown script", "/v1/messages", `{"model":"script:nope","messages":[{"role":"user","content":"go"}]}`, `no script named \"nope\"`, 400},
		{"anthropic turn 1", "/v1/messages", `{"model":"script:two","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"first"},{"role":"user","content":"b"}]}`, `"second"`, 200},
		{"responses turn 1", "/v1/responses", `{"model":"script:two","input":[{"role":"user","content":"a"},{"type":"reasoning","summary":[]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"first"}]},{"role":"user","content":"b"}]}`, `"second"`, 200},
		{"chat turn 1", "/v1/chat/completions", `{"model":"script:two","messages":[{"role":"system","content":"s"},{"role":"user","content":"a"},{"role":"assistant","content":"first"},{"role":"user","content":"b"}]}`, `"second"`, 200},
		{"past the end", "/v1/chat/completions", `{"model":"script:two","messages":[{"role":"assistant","content":"1"},{"role":"assistant","content":"2"}]}`, `has no turn 2`, 400},
	}
	for _, c := range cases {
		status, _, body := post(t, srv.URL()+c.path, c.body)
		if status != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: got %d %s, want %d containing %s", c.name, status, body, c.status, c.want)
		}
	}
}

// TestAttemptCounterWithoutHeader: a client that sends no retry header
// (curl), or always sends 0 (Claude Code), or reorders its body's keys on
// every try (Codex's client_metadata) gets the first K attempts failed
// through the counter of canonical requests; a header above 0 is taken as
// it is.
func TestAttemptCounterWithoutHeader(t *testing.T) {
	t.Parallel()
	const script = "name: flaky\nturns: [{text: ok, error: {status: 429, retry_after: 1500ms, times: 2}}]\n"
	for _, tc := range []struct {
		name   string
		bodies []string
		header []string
	}{
		{"no header", []string{`{"model":"script:flaky","messages":[{"role":"user","content":"x"}]}`}, nil},
		{"header always 0", []string{`{"model":"script:flaky","messages":[{"role":"user","content":"x"}]}`}, []string{"X-Stainless-Retry-Count", "0"}},
		{"keys reordered on every try", []string{
			`{"model":"script:flaky","metadata":{"a":"1","b":"2"},"messages":[{"role":"user","content":"x"}]}`,
			`{"messages":[{"content":"x","role":"user"}],"metadata":{"b":"2","a":"1"},"model":"script:flaky"}`,
			`{"metadata":{"b":"2","a":"1"},"model":"script:flaky","messages":[{"role":"user","content":"x"}]}`,
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := start(t, script)
			var got []int
			for i := range 3 {
				status, hdr, _ := post(t, srv.URL()+"/v1/messages", tc.bodies[i%len(tc.bodies)], tc.header...)
				got = append(got, status)
				if status == 429 && (hdr.Get("Retry-After") != "2" || hdr.Get("Retry-After-Ms") != "1500") {
					t.Errorf("retry headers %q %q", hdr.Get("Retry-After"), hdr.Get("Retry-After-Ms"))
				}
			}
			if got[0] != 429 || got[1] != 429 || got[2] != 200 {
				t.Errorf("statuses = %v, want [429 429 200]", got)
			}
			for i, r := range srv.Requests() {
				if r.Attempt != i || r.AttemptSource != "counter" {
					t.Errorf("request %d: attempt %d from %s", i, r.Attempt, r.AttemptSource)
				}
			}
		})
	}
	// A header above 0 comes from the client and is stateless.
	srv := start(t, script)
	body := `{"model":"script:flaky","messages":[{"role":"user","content":"y"}]}`
	if status, _, _ := post(t, srv.URL()+"/v1/messages", body, "X-Stainless-Retry-Count", "2"); status != 200 {
		t.Errorf("header attempt 2: %d, want 200", status)
	}
	if status, _, _ := post(t, srv.URL()+"/v1/messages", body, "X-Stainless-Retry-Count", "1"); status != 429 {
		t.Errorf("header attempt 1: %d, want 429", status)
	}
	if reqs := srv.Requests(); reqs[0].AttemptSource != "header" || reqs[0].Attempt != 2 {
		t.Errorf("source %q attempt %d", reqs[0].AttemptSource, reqs[0].Attempt)
	}
}

func TestRequestsEndpointRedacts(t *testing.T) {
	t.Parallel()
	srv := start(t, "")
	post(t, srv.URL()+"/v1/messages", `{"model":"x","messages":[{"role":"user","content":"x"}]}`, "X-Api-Key", "sk-secret-value", "Authorization", "Bearer sk-other")
	res, err := http.Get(srv.URL() + "/_requests")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if bytes.Contains(b, []byte("sk-secret-value")) || bytes.Contains(b, []byte("sk-other")) {
		t.Errorf("credentials in /_requests: %s", b)
	}
	var reqs []Recorded
	if err := json.Unmarshal(b, &reqs); err != nil || len(reqs) != 1 || reqs[0].Script != "echo" || reqs[0].Status != 200 {
		t.Errorf("reqs = %+v (%v)", reqs, err)
	}
}

func TestStartRefusesNonLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", ":0"} {
		if s, err := Start(nil, addr, Options{}); err == nil {
			_ = s.Close()
			t.Errorf("%s accepted", addr)
		}
	}
}
