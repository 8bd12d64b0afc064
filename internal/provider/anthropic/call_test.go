package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/provider"
)

func tools() []provider.ToolDef {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)
	return []provider.ToolDef{
		{Name: "read_file", Description: "Read a file.", InputSchema: schema},
		{Name: "shell", Description: "Run a command.", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`)},
	}
}

func TestTextTurnStreamsDeltas(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	var deltas strings.Builder
	resp, err := b.a.Call(context.Background(), provider.Request{
		Model: "script:echo", System: "be brief", Transcript: b.a.InitTranscript("hello there"),
		OnDelta: func(d provider.Delta) { deltas.WriteString(d.Text) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Blocks) != 1 || resp.Blocks[0].Type != provider.BlockText || resp.Blocks[0].Text != "echo: hello there" {
		t.Fatalf("blocks = %+v", resp.Blocks)
	}
	if deltas.String() != "echo: hello there" {
		t.Errorf("deltas = %q", deltas.String())
	}
	if resp.Stop != provider.StopEndTurn || resp.NativeStop != "end_turn" || resp.Attempts != 1 || resp.Model != "script:echo" {
		t.Errorf("resp = %+v", resp)
	}
	if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Errorf("usage = %+v", resp.Usage)
	}
	if want := `{"role":"assistant","content":[{"type":"text","text":"echo: hello there"}]}`; string(resp.Native) != want {
		t.Errorf("native = %s", resp.Native)
	}
}

const toolScript = `
name: tools
turns:
  - thinking: "I should read the file and run the tests."
    text: "Reading."
    tool_calls:
      - {name: read_file, input: {path: "a.go"}}
      - {name: shell, input: {command: "go test ./..."}}
    usage: {input: 1000, output: 200, cache_read: 5000, cache_write: 300}
  - expect:
      - tool_results: 2
      - last_tool_result_contains: "exit code 0"
      - last_tool_result_error: false
      - transcript_contains: "package a"
    text: "All good."
`

func TestParallelToolRoundTripReplaysThinkingVerbatim(t *testing.T) {
	t.Parallel()
	b := setup(t, toolScript)
	ctx := context.Background()
	tr := b.a.InitTranscript("fix the test")
	resp, err := b.a.Call(ctx, provider.Request{Model: "script:tools", Tools: tools(), Transcript: tr})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Stop != provider.StopToolUse {
		t.Fatalf("stop = %s", resp.Stop)
	}
	calls := resp.ToolCalls()
	if len(calls) != 2 || calls[0].Name != "read_file" || calls[1].Name != "shell" {
		t.Fatalf("calls = %+v", calls)
	}
	if string(calls[0].Input) != `{"path":"a.go"}` || string(calls[1].Input) != `{"command":"go test ./..."}` {
		t.Errorf("inputs = %s, %s", calls[0].Input, calls[1].Input)
	}
	if calls[0].ID == "" || calls[0].ID == calls[1].ID {
		t.Errorf("ids = %q, %q", calls[0].ID, calls[1].ID)
	}
	if resp.Blocks[0].Type != provider.BlockThinking || resp.Blocks[0].Text != "I should read the file and run the tests." {
		t.Errorf("thinking = %+v", resp.Blocks[0])
	}
	want := provider.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 5000, CacheWriteTokens: 300}
	if resp.Usage != want {
		t.Errorf("usage = %+v", resp.Usage)
	}
	tr = provider.Append(tr, resp.Native)
	tr = b.a.AppendToolResults(tr, []provider.ToolResult{
		{CallID: calls[0].ID, Name: "read_file", Content: "package a"},
		{CallID: calls[1].ID, Name: "shell", Content: "[exit code 0]\nok"},
	})
	resp2, err := b.a.Call(ctx, provider.Request{Model: "script:tools", Tools: tools(), Transcript: tr})
	if err != nil {
		t.Fatal(err)
	}
	if resp2.Blocks[0].Text != "All good." {
		t.Fatalf("second turn = %+v", resp2.Blocks)
	}
	// The assistant message, thinking signature included, went back byte for byte.
	reqs := b.srv.Requests()
	var body struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(reqs[1].Body, &body); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(body.Messages[1], resp.Native) {
		t.Errorf("assistant entry changed on the wire:\n got %s\nwant %s", body.Messages[1], resp.Native)
	}
	if !bytes.Contains(resp.Native, []byte(`"signature":"sig_`)) {
		t.Errorf("native has no signature: %s", resp.Native)
	}
	var results struct {
		Content []map[string]any `json:"content"`
	}
	if err := json.Unmarshal(body.Messages[2], &results); err != nil || len(results.Content) != 2 {
		t.Fatalf("tool results message = %s (%v)", body.Messages[2], err)
	}
}

func TestFailedToolResultCarriesIsError(t *testing.T) {
	t.Parallel()
	b := setup(t, `
name: fail
turns:
  - tool_calls: [{name: shell, input: {command: "false"}}]
  - expect: [{last_tool_result_error: true}]
    text: ok
`)
	ctx := context.Background()
	tr := b.a.InitTranscript("go")
	resp, err := b.a.Call(ctx, provider.Request{Model: "script:fail", Tools: tools(), Transcript: tr})
	if err != nil {
		t.Fatal(err)
	}
	tr = b.a.AppendToolResults(provider.Append(tr, resp.Native), []provider.ToolResult{{CallID: resp.ToolCalls()[0].ID, Content: "boom", IsError: true}})
	if want := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + resp.ToolCalls()[0].ID + `","content":"boom","is_error":true}]}`; string(tr[2]) != want {
		t.Errorf("entry = %s", tr[2])
	}
	if _, err := b.a.Call(ctx, provider.Request{Model: "script:fail", Tools: tools(), Transcript: tr}); err != nil {
		t.Fatal(err)
	}
}

func TestRefusal(t *testing.T) {
	t.Parallel()
	b := setup(t, `
name: refuse
turns:
  - refusal: {category: cyber, explanation: "not this"}
`)
	resp, err := b.a.Call(context.Background(), provider.Request{Model: "script:refuse", Transcript: b.a.InitTranscript("x")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Stop != provider.StopRefusal || resp.NativeStop != "refusal" || resp.Refusal == nil ||
		resp.Refusal.Category != "cyber" || resp.Refusal.Explanation != "not this" {
		t.Fatalf("resp = %+v refusal=%+v", resp, resp.Refusal)
	}
}

func TestTruncatedToolInputIsNotExecutable(t *testing.T) {
	t.Parallel()
	b := setup(t, `
name: cut
turns:
  - tool_calls:
      - {name: read_file, input: {path: "a.go"}}
      - {name: shell, input: {command: "go test ./... -run TestSomethingLong"}}
    max_tokens: true
`)
	resp, err := b.a.Call(context.Background(), provider.Request{Model: "script:cut", Tools: tools(), Transcript: b.a.InitTranscript("x")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Stop != provider.StopMaxTokens {
		t.Errorf("stop = %s", resp.Stop)
	}
	if len(resp.Blocks) != 2 || resp.Blocks[0].Truncated || !resp.Blocks[1].Truncated {
		t.Fatalf("blocks = %+v", resp.Blocks)
	}
	if n := len(resp.ToolCalls()); n != 1 {
		t.Errorf("executable calls = %d", n)
	}
	// The response is a step result: it must encode even with a cut input.
	if _, err := json.Marshal(resp); err != nil {
		t.Errorf("response with a truncated call does not encode: %v", err)
	}
	var partial string
	if err := json.Unmarshal(resp.Blocks[1].Input, &partial); err != nil || !strings.HasPrefix(partial, `{"command":"go test`) {
		t.Errorf("partial input = %s (%v)", resp.Blocks[1].Input, err)
	}
	if bytes.Contains(resp.Native, []byte(`"shell"`)) {
		t.Errorf("truncated call kept in native: %s", resp.Native)
	}
}

func TestPauseTurn(t *testing.T) {
	t.Parallel()
	b := setup(t, "name: p\nturns: [{text: hm, pause_turn: true}]\n")
	resp, err := b.a.Call(context.Background(), provider.Request{Model: "script:p", Transcript: b.a.InitTranscript("x")})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Stop != provider.StopPauseTurn {
		t.Errorf("stop = %s", resp.Stop)
	}
}
