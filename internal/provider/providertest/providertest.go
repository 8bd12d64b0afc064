// Package providertest is the conformance suite every model adapter runs
// (anthropic, openai, compat): the adapter, built over its official SDK,
// talks real HTTP to the scripted model server (internal/provider/script),
// and the suite checks what aos relies on whatever the provider: text and
// its streamed deltas, tool calls and their results, usage and cost,
// retries of transient failures (429, overload, 5xx, a dropped stream, an
// error mid-stream) counted in attempts and seen by the server, typed
// non-retryable errors, prompt return on cancellation, and no secret in any
// error.
//
// An adapter's own package keeps only the tests of what is particular to
// its wire (request shape, replay of reasoning, recorded fixtures). It is
// imported by tests only.
package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/script"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

// Secret is the API key the suite gives each adapter; it must never appear
// in an error.
const Secret = "sk-conformance-SECRET-0123456789abcdef"

// Target is one adapter under the suite.
type Target struct {
	// ID is the provider the adapter reports and its errors name.
	ID provider.ID
	// KeyEnv is the variable the adapter reads its key from (through
	// cfg.Getenv); the suite sets it to Secret.
	KeyEnv string
	// Overloaded is the provider's overload status (Anthropic 529, the
	// OpenAI wire 503).
	Overloaded int
	// New builds the adapter over srv from cfg, which the suite fills
	// (Getenv, Retry, Models); New adds how the adapter finds srv (a
	// base-URL variable in cfg.Getenv's environment, or cfg.BaseURL).
	New func(t *testing.T, srv *script.Server, cfg provider.Config) provider.Adapter
}

// maxAttempts is the retry policy's attempt cap in the suite.
const maxAttempts = 3

// bundle is one test's server, adapter and recorded retry waits.
type bundle struct {
	srv    *script.Server
	a      provider.Adapter
	sleeps *sleeps
}

// sleeps records the retry policy's waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) all() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func (tg Target) setup(t *testing.T, scriptYAML string, mods ...func(*provider.Config)) bundle {
	t.Helper()
	srv := scripttest.Start(t, scriptYAML)
	sl := &sleeps{}
	env := map[string]string{tg.KeyEnv: Secret}
	cfg := provider.Config{
		Getenv: func(k string) string { return env[k] },
		Retry: provider.RetryPolicy{MaxAttempts: maxAttempts, Sleep: sl.sleep,
			Jitter: func(d time.Duration) time.Duration { return d }},
		Models: []provider.ModelInfo{{ID: "script:priced", Provider: tg.ID, Tools: true, Price: provider.Price{Input: 2, Output: 10}}},
	}
	for _, m := range mods {
		m(&cfg)
	}
	return bundle{srv: srv, a: tg.New(t, srv, cfg), sleeps: sl}
}

// deltas collects a call's streamed deltas.
type deltas struct {
	mu  sync.Mutex
	all []provider.Delta
}

func (d *deltas) on(x provider.Delta) {
	d.mu.Lock()
	d.all = append(d.all, x)
	d.mu.Unlock()
}

// text returns the text shown since the last reset.
func (d *deltas) text() (string, int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var b strings.Builder
	resets := 0
	for _, x := range d.all {
		switch x.Type {
		case provider.DeltaReset:
			b.Reset()
			resets++
		case provider.DeltaText:
			b.WriteString(x.Text)
		}
	}
	return b.String(), resets
}

// Exercise runs the suite against tg.
func Exercise(t *testing.T, tg Target) {
	t.Run("text streams deltas", func(t *testing.T) { t.Parallel(); testText(t, tg) })
	t.Run("tool calls round trip", func(t *testing.T) { t.Parallel(); testTools(t, tg) })
	t.Run("usage and cost", func(t *testing.T) { t.Parallel(); testUsage(t, tg) })
	t.Run("retryable errors", func(t *testing.T) { t.Parallel(); testRetryable(t, tg) })
	t.Run("retry then success", func(t *testing.T) { t.Parallel(); testRetryThenSuccess(t, tg) })
	t.Run("dropped stream resets deltas", func(t *testing.T) { t.Parallel(); testDropResets(t, tg) })
	t.Run("non-retryable errors", func(t *testing.T) { t.Parallel(); testNonRetryable(t, tg) })
	t.Run("cancel", func(t *testing.T) { t.Parallel(); testCancel(t, tg) })
	t.Run("no secret in errors", func(t *testing.T) { t.Parallel(); testNoSecret(t, tg) })
}

func call(b bundle, model string, d *deltas, tools ...provider.ToolDef) (*provider.Response, error) {
	req := provider.Request{Model: model, Transcript: b.a.InitTranscript("hello"), Tools: tools}
	if d != nil {
		req.OnDelta = d.on
	}
	return b.a.Call(context.Background(), req)
}

func testText(t *testing.T, tg Target) {
	b := tg.setup(t, "name: t\nturns: [{text: \"Hello from the scripted model, in several words.\"}]\n")
	d := &deltas{}
	resp, err := call(b, "script:t", d)
	if err != nil {
		t.Fatal(err)
	}
	const want = "Hello from the scripted model, in several words."
	if len(resp.Blocks) != 1 || resp.Blocks[0].Type != provider.BlockText || resp.Blocks[0].Text != want {
		t.Errorf("blocks = %+v, want one text block %q", resp.Blocks, want)
	}
	if resp.Stop != provider.StopEndTurn || resp.Attempts != 1 || len(resp.Native) == 0 {
		t.Errorf("stop %q attempts %d native %d bytes, want end_turn, 1, some", resp.Stop, resp.Attempts, len(resp.Native))
	}
	if got, resets := d.text(); got != want || resets != 0 {
		t.Errorf("streamed %q with %d resets, want %q and none", got, resets, want)
	}
	if n := len(b.srv.Requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1", n)
	}
}

func toolDefs() []provider.ToolDef {
	s := json.RawMessage(`{"type":"object","properties":{},"additionalProperties":true}`)
	return []provider.ToolDef{{Name: "read_file", Description: "read", InputSchema: s}, {Name: "shell", Description: "run", InputSchema: s}}
}

func testTools(t *testing.T, tg Target) {
	b := tg.setup(t, `
name: tools
turns:
  - text: "Looking."
    tool_calls:
      - {name: read_file, input: {path: "a.go"}}
      - {name: shell, input: {command: "go test ./..."}}
  - expect: [{tool_results: 2}, {last_tool_result_error: true}]
    text: "done"
`)
	ctx := context.Background()
	tr := b.a.InitTranscript("fix it")
	resp, err := b.a.Call(ctx, provider.Request{Model: "script:tools", Transcript: tr, Tools: toolDefs()})
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.ToolCalls()
	if resp.Stop != provider.StopToolUse || len(calls) != 2 || calls[0].Name != "read_file" || calls[1].Name != "shell" {
		t.Fatalf("stop %q calls %+v, want tool_use with read_file and shell", resp.Stop, calls)
	}
	var in struct{ Command string }
	if err := json.Unmarshal(calls[1].Input, &in); err != nil || in.Command != "go test ./..." || calls[0].ID == "" || calls[0].ID == calls[1].ID {
		t.Fatalf("calls %+v: input %q (%v), want distinct ids and the scripted input", calls, in.Command, err)
	}
	tr = append(tr, resp.Native)
	tr = b.a.AppendToolResults(tr, []provider.ToolResult{
		{CallID: calls[0].ID, Name: calls[0].Name, Content: "package a"},
		{CallID: calls[1].ID, Name: calls[1].Name, Content: "FAIL", IsError: true},
	})
	resp, err = b.a.Call(ctx, provider.Request{Model: "script:tools", Transcript: tr, Tools: toolDefs()})
	if err != nil {
		t.Fatalf("second turn (the server checks both results arrived, the last one failed): %v", err)
	}
	if resp.Stop != provider.StopEndTurn || len(resp.Blocks) == 0 || resp.Blocks[len(resp.Blocks)-1].Text != "done" {
		t.Errorf("second turn %+v", resp)
	}
}

func testUsage(t *testing.T, tg Target) {
	b := tg.setup(t, "name: priced\nturns: [{text: ok, usage: {input: 1000, output: 200, cache_read: 300}}]\n")
	resp, err := call(b, "script:priced", nil)
	if err != nil {
		t.Fatal(err)
	}
	// Input excludes cached tokens, whatever the wire counts.
	if resp.Usage.InputTokens != 1000 || resp.Usage.OutputTokens != 200 || resp.Usage.CacheReadTokens != 300 {
		t.Errorf("usage %+v, want input 1000 output 200 cache read 300", resp.Usage)
	}
	// $2 per MTok in, $10 out; a configured model has no cache price, so
	// cached tokens cost nothing.
	want := 1000*2/1e6 + 200*10/1e6
	if got := b.a.Price("script:priced", resp.Usage); got < want-1e-12 || got > want+1e-12 {
		t.Errorf("price %v, want %v", got, want)
	}
	if got := b.a.Price("script:unpriced-model", resp.Usage); got != 0 {
		t.Errorf("an unpriced model costs %v, want 0", got)
	}
}

func testRetryable(t *testing.T, tg Target) {
	for _, tc := range []struct {
		name   string
		turn   string
		status int
	}{
		{"rate limit", `{error: {status: 429, retry_after: 1s}}`, 429},
		{"overloaded", fmt.Sprintf(`{error: {status: %d}}`, tg.Overloaded), tg.Overloaded},
		{"server error", `{error: {status: 500}}`, 500},
		{"bad gateway", `{error: {status: 502}}`, 502},
		{"dropped stream", `{text: "some text that is long enough", error: {drop: true}}`, 0},
		{"error mid-stream", fmt.Sprintf(`{text: "some text", error: {status: %d, mid_stream: true}}`, tg.Overloaded), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := tg.setup(t, "name: e\nturns: ["+tc.turn+"]\n")
			_, err := call(b, "script:e", nil)
			var pe *provider.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want a *provider.ProviderError", err, err)
			}
			if !pe.Retryable || pe.Provider != tg.ID || pe.Status != tc.status || pe.Code == "" || pe.Attempts != maxAttempts {
				t.Errorf("got provider %s status %d code %q retryable %v attempts %d, want %s %d, a code, retryable, %d (%v)",
					pe.Provider, pe.Status, pe.Code, pe.Retryable, pe.Attempts, tg.ID, tc.status, maxAttempts, err)
			}
			if n := len(b.srv.Requests()); n != maxAttempts {
				t.Errorf("server saw %d requests, want %d", n, maxAttempts)
			}
			if !errors.Is(err, &provider.ProviderError{Code: pe.Code}) {
				t.Errorf("errors.Is by code %q failed", pe.Code)
			}
			if got := len(b.sleeps.all()); got != maxAttempts-1 {
				t.Errorf("%d waits between attempts, want %d", got, maxAttempts-1)
			}
		})
	}
}

func testRetryThenSuccess(t *testing.T, tg Target) {
	b := tg.setup(t, "name: flaky\nturns: [{text: ok, error: {status: 429, retry_after: 3s, times: 2}}]\n")
	resp, err := call(b, "script:flaky", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 3 || len(resp.Blocks) != 1 || resp.Blocks[0].Text != "ok" {
		t.Errorf("attempts %d blocks %+v, want 3 and ok", resp.Attempts, resp.Blocks)
	}
	if got := b.sleeps.all(); len(got) != 2 || got[0] != 3*time.Second || got[1] != 3*time.Second {
		t.Errorf("waits %v, want retry-after's [3s 3s]", got)
	}
	// Each retry says which attempt it is (X-Stainless-Retry-Count), so the
	// server counts retries from the request, not from its own memory.
	for i, r := range b.srv.Requests() {
		if r.Attempt != i {
			t.Errorf("request %d: server counted attempt %d (from %s)", i, r.Attempt, r.AttemptSource)
		}
	}
}

func testDropResets(t *testing.T, tg Target) {
	const want = "a fairly long answer that streams in several chunks"
	b := tg.setup(t, "name: drop\nturns: [{text: \""+want+"\", error: {drop: true, times: 1, after_events: 5}}]\n")
	d := &deltas{}
	resp, err := call(b, "script:drop", d)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Attempts != 2 {
		t.Errorf("attempts %d, want 2", resp.Attempts)
	}
	got, resets := d.text()
	if len(d.all) == 0 || d.all[0].Type != provider.DeltaText {
		t.Fatalf("deltas %+v: the first attempt showed nothing before the drop", d.all)
	}
	if got != want || resets != 1 {
		t.Errorf("shown after resets: %q with %d resets, want the whole text after one reset (deltas %+v)", got, resets, d.all)
	}
}

func testNonRetryable(t *testing.T, tg Target) {
	for _, status := range []int{400, 401, 403, 404} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			b := tg.setup(t, fmt.Sprintf("name: e\nturns: [{error: {status: %d, message: \"no\"}}]\n", status))
			_, err := call(b, "script:e", nil)
			var pe *provider.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want a *provider.ProviderError", err, err)
			}
			if pe.Retryable || pe.Status != status || pe.Attempts != 1 || pe.Provider != tg.ID || pe.Code == "" {
				t.Errorf("got %+v, want status %d, not retryable, 1 attempt, a code", pe, status)
			}
			if n := len(b.srv.Requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1", n)
			}
		})
	}
}

func testCancel(t *testing.T, tg Target) {
	b := tg.setup(t, "name: stall\nturns: [{text: partial, stall: true}]\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		_, err := b.a.Call(ctx, provider.Request{Model: "script:stall", Transcript: b.a.InitTranscript("x"),
			OnDelta: func(provider.Delta) {
				select {
				case started <- struct{}{}:
				default:
				}
			}})
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("no delta before the stall")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		var pe *provider.ProviderError
		if errors.As(err, &pe) {
			t.Errorf("a cancellation is not a provider error: %v", pe)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Call did not return within 5s of cancel")
	}
	if n := len(b.srv.Requests()); n != 1 {
		t.Errorf("server saw %d requests, want 1 (a cancelled call is not retried)", n)
	}
}

func testNoSecret(t *testing.T, tg Target) {
	for _, turn := range []string{
		fmt.Sprintf(`{error: {status: 401, message: "invalid key %s"}}`, Secret),
		fmt.Sprintf(`{error: {status: 500, message: "upstream said %s"}}`, Secret),
		fmt.Sprintf(`{text: x, error: {status: %d, mid_stream: true, message: "key %s overloaded"}}`, tg.Overloaded, Secret),
	} {
		b := tg.setup(t, "name: k\nturns: ["+turn+"]\n")
		_, err := call(b, "script:k", nil)
		if err == nil {
			t.Fatalf("%s: want an error", turn)
		}
		for e := err; e != nil; e = errors.Unwrap(e) {
			if s := fmt.Sprintf("%v %+v %#v", e, e, e); strings.Contains(s, Secret) {
				t.Errorf("%s: the key is in the error chain (%T): %s", turn, e, s)
			}
		}
		if !strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("%s: the error lost its message instead of redacting the key: %v", turn, err)
		}
	}
}
