package script

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// What real clients (Codex CLI, Claude Code) need of the server beyond
// the SDKs: issue 12 §6.

func get(t *testing.T, url string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
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

// TestResponsesMidStreamErrorIsResponseFailed: a scripted mid-stream error
// on the Responses API ends the stream with response.failed whose
// response.error names a retryable code, as the real API does.
func TestResponsesMidStreamErrorIsResponseFailed(t *testing.T) {
	t.Parallel()
	srv := start(t, "name: m\nturns: [{text: abc, error: {status: 529, mid_stream: true}}]\n")
	status, _, body := post(t, srv.URL()+"/v1/responses", `{"model":"script:m","stream":true,"input":"x"}`)
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	var failed map[string]any
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, `"response.failed"`) {
			if err := json.Unmarshal([]byte(d), &failed); err != nil {
				t.Fatal(err)
			}
		}
	}
	if failed == nil || !strings.Contains(body, "event: response.failed\n") {
		t.Fatalf("no response.failed event in:\n%s", body)
	}
	resp, _ := failed["response"].(map[string]any)
	e, _ := resp["error"].(map[string]any)
	if resp["status"] != "failed" || e["code"] != "server_error" || e["message"] != "Overloaded" {
		t.Errorf("response.failed = %v", failed)
	}
	if _, ok := failed["sequence_number"].(float64); !ok {
		t.Errorf("no sequence_number: %v", failed)
	}
}

// TestNonStreamedSeeFailuresAsHTTPErrors: mid_stream and drop failures
// reach a request that is not streamed as HTTP errors in its provider's
// shape; 529's message is "Overloaded".
func TestNonStreamedSeeFailuresAsHTTPErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, turn, path, body string
		status                 int
		want                   string
	}{
		{"anthropic mid-stream 529", `{text: a, error: {status: 529, mid_stream: true}}`, "/v1/messages",
			`{"model":"script:n","messages":[{"role":"user","content":"x"}]}`, 529, `"message":"Overloaded"`},
		{"anthropic drop", `{text: a, error: {drop: true}}`, "/v1/messages",
			`{"model":"script:n","messages":[{"role":"user","content":"x"}]}`, 502, `"type":"error"`},
		{"responses mid-stream 500", `{text: a, error: {status: 500, mid_stream: true}}`, "/v1/responses",
			`{"model":"script:n","input":"x"}`, 500, `"message":"Internal Server Error"`},
		{"chat drop", `{text: a, error: {drop: true}}`, "/v1/chat/completions",
			`{"model":"script:n","messages":[{"role":"user","content":"x"}]}`, 502, `"error":{`},
		{"anthropic plain 529", `{text: a, error: {status: 529}}`, "/v1/messages",
			`{"model":"script:n","messages":[{"role":"user","content":"x"}]}`, 529, `"message":"Overloaded"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := start(t, "name: n\nturns: ["+tc.turn+"]\n")
			status, hdr, body := post(t, srv.URL()+tc.path, tc.body)
			if status != tc.status || !strings.Contains(body, tc.want) || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
				t.Errorf("got %d %q %s, want %d with %s", status, hdr.Get("Content-Type"), body, tc.status, tc.want)
			}
		})
	}
}

// TestAnthropicRoutesAndUnknownRoutes: count_tokens and GET
// /v1/models/{id} answer as the Anthropic API does; an unknown route or
// model gets the provider's JSON error, not text/plain.
func TestAnthropicRoutesAndUnknownRoutes(t *testing.T) {
	t.Parallel()
	srv := start(t, "name: r\nturns: [{text: a}]\n")
	status, _, body := post(t, srv.URL()+"/v1/messages/count_tokens", `{"model":"script:r","messages":[{"role":"user","content":"hello"}]}`)
	var ct struct {
		InputTokens int `json:"input_tokens"`
	}
	if status != 200 || json.Unmarshal([]byte(body), &ct) != nil || ct.InputTokens < 1 {
		t.Errorf("count_tokens: %d %s", status, body)
	}
	if status, _, body := post(t, srv.URL()+"/v1/messages/count_tokens", `{}`); status != 400 || !strings.Contains(body, `"invalid_request_error"`) {
		t.Errorf("count_tokens without messages: %d %s", status, body)
	}
	status, _, body = get(t, srv.URL()+"/v1/models/script:r", "Anthropic-Version", "2023-06-01")
	if status != 200 || !strings.Contains(body, `"type":"model"`) || !strings.Contains(body, `"id":"script:r"`) {
		t.Errorf("anthropic model: %d %s", status, body)
	}
	status, _, body = get(t, srv.URL()+"/v1/models/script:r")
	if status != 200 || !strings.Contains(body, `"object":"model"`) {
		t.Errorf("openai model: %d %s", status, body)
	}
	for _, c := range []struct {
		method, path string
		hdr          []string
		shape        string
	}{
		{"GET", "/v1/models/nope", []string{"Anthropic-Version", "2023-06-01"}, `"type":"error"`},
		{"GET", "/v1/models/nope", nil, `"error":{"code":null`},
		{"POST", "/v1/messages/batches", nil, `"type":"not_found_error"`},
		{"GET", "/v1/files", nil, `"type":"not_found_error"`},
		{"DELETE", "/v1/messages", nil, `"type":"error"`},
	} {
		var status int
		var hdr http.Header
		var body string
		if c.method == "POST" {
			status, hdr, body = post(t, srv.URL()+c.path, `{}`, c.hdr...)
		} else {
			req, _ := http.NewRequest(c.method, srv.URL()+c.path, nil)
			for i := 0; i+1 < len(c.hdr); i += 2 {
				req.Header.Set(c.hdr[i], c.hdr[i+1])
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			_ = res.Body.Close()
			status, hdr, body = res.StatusCode, res.Header, string(b)
		}
		if status != 404 || hdr.Get("Content-Type") != "application/json" || !strings.Contains(body, c.shape) || !json.Valid([]byte(body)) {
			t.Errorf("%s %s %v: %d %q %s, want 404 JSON with %s", c.method, c.path, c.hdr, status, hdr.Get("Content-Type"), body, c.shape)
		}
	}
}

// TestToolArgumentsAreNotHTMLEscaped: "<", ">" and "&" in a tool call's
// input reach the client as they are, streamed and not.
func TestToolArgumentsAreNotHTMLEscaped(t *testing.T) {
	t.Parallel()
	srv := start(t, "name: h\nturns: [{tool_calls: [{name: shell, input: {command: \"a < b && c > d\"}}]}]\n")
	for _, c := range []struct{ path, body string }{
		{"/v1/responses", `{"model":"script:h","input":"x"}`},
		{"/v1/responses", `{"model":"script:h","stream":true,"input":"x"}`},
		{"/v1/messages", `{"model":"script:h","stream":true,"messages":[{"role":"user","content":"x"}]}`},
		{"/v1/chat/completions", `{"model":"script:h","messages":[{"role":"user","content":"x"}]}`},
	} {
		_, _, body := post(t, srv.URL()+c.path, c.body)
		if strings.Contains(body, `\u003c`) || strings.Contains(body, `\u0026`) || strings.Contains(body, `\u003e`) {
			t.Errorf("%s %s: HTML-escaped arguments:\n%.600s", c.path, c.body, body)
		}
		if !strings.Contains(body, "a < b") && !strings.Contains(body, "a <") {
			t.Errorf("%s: the command is not in the answer:\n%.600s", c.path, body)
		}
	}
}

// TestTurnCountingCountsEveryToolCallItem: custom_tool_call,
// local_shell_call and web_search_call items are the assistant's turns,
// as function_call items are.
func TestTurnCountingCountsEveryToolCallItem(t *testing.T) {
	t.Parallel()
	for _, item := range []string{
		`{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"*** Begin Patch"}`,
		`{"type":"local_shell_call","call_id":"c1","status":"completed","action":{"type":"exec","command":["ls"]}}`,
		`{"type":"web_search_call","id":"ws1","status":"completed"}`,
		`{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"}`,
	} {
		out := `{"type":"custom_tool_call_output","call_id":"c1","output":"done"}`
		if strings.Contains(item, "local_shell") {
			out = `{"type":"local_shell_call_output","call_id":"c1","output":"done"}`
		} else if strings.Contains(item, "function_call") {
			out = `{"type":"function_call_output","call_id":"c1","output":"done"}`
		}
		body := `{"model":"script:x","input":[{"role":"user","content":"go"},` + item + `,` + out + `,{"role":"user","content":"more"}]}`
		c, err := parseConversation(FormatResponses, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if c.AssistantTurns != 1 {
			t.Errorf("%s: %d assistant turns, want 1", item, c.AssistantTurns)
		}
	}
}

// TestAttemptsByTurn: OpenClaw retries a failed model call by sending a
// rewritten prompt (its agent-level retry: "[Queued user message …]
// Continue the current task …") with no retry header, so counting by body
// saw each rewrite as a first attempt and "times: 1" failed it twice.
// attempts_by: turn counts every request for the script's turn; the
// default still counts by body.
func TestAttemptsByTurn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		by   string
		want []int // statuses of two different requests for turn 0
	}{
		{"", []int{529, 529}},
		{"attempts_by: body\n", []int{529, 529}},
		{"attempts_by: turn\n", []int{529, 200}},
	} {
		srv := start(t, "name: r\n"+tc.by+"turns: [{text: ok, error: {status: 529, times: 1}}]\n")
		for i, input := range []string{"make hello", "[Queued user message] make hello. Continue the current task."} {
			status, _, body := post(t, srv.URL()+"/v1/responses", `{"model":"script:r","input":"`+input+`"}`)
			if status != tc.want[i] {
				t.Errorf("%q request %d: status %d (%s), want %d", tc.by, i, status, body, tc.want[i])
			}
		}
	}
	if _, err := Parse([]byte("name: r\nattempts_by: session\nturns: [{text: ok}]\n"), "r"); err == nil {
		t.Error("attempts_by session was accepted")
	}
}
