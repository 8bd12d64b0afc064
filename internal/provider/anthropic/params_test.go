package anthropic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/anthropic"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run with -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\n got %s\nwant %s", name, got, want)
	}
}

func indent(t *testing.T, b []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// TestRequestShape checks every request field the issue names against the
// body the SDK actually sent, and keeps it as a golden file.
func TestRequestShape(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	tr := b.a.InitTranscript("hi")
	tr = b.a.AppendOperatorNote(tr, "claude-opus-5-5", "budget at 50%")
	if _, err := b.a.Call(context.Background(), provider.Request{
		Model: "claude-opus-5-5", Effort: provider.EffortHigh, System: "You are aos.", Tools: tools(), Transcript: tr,
	}); err != nil {
		t.Fatal(err)
	}
	rec := b.srv.Requests()[0]
	golden(t, "request.golden.json", indent(t, rec.Body))

	var body struct {
		Model        string `json:"model"`
		MaxTokens    int    `json:"max_tokens"`
		Stream       bool   `json:"stream"`
		Thinking     map[string]any
		OutputConfig map[string]any `json:"output_config"`
		CacheControl map[string]any `json:"cache_control"`
		Fallbacks    any            `json:"fallbacks"`
		System       []map[string]any
		Tools        []map[string]any
		Messages     []map[string]any
		ToolChoice   any `json:"tool_choice"`
	}
	if err := json.Unmarshal(rec.Body, &body); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name string
		ok   bool
	}{
		{"streamed", body.Stream},
		{"max_tokens 64000", body.MaxTokens == 64000},
		{"adaptive summarized thinking", body.Thinking["type"] == "adaptive" && body.Thinking["display"] == "summarized" && body.Thinking["budget_tokens"] == nil},
		{"effort in output_config", body.OutputConfig["effort"] == "high"},
		{"automatic tail caching", body.CacheControl["type"] == "ephemeral"},
		{"breakpoint on system", len(body.System) == 1 && body.System[0]["cache_control"] != nil},
		{"strict tools with eager input", len(body.Tools) == 2 && body.Tools[0]["strict"] == true && body.Tools[0]["eager_input_streaming"] == true},
		{"no forced tool choice", body.ToolChoice == nil},
		{"server-side fallback", body.Fallbacks == "default"},
		{"operator note as system message", len(body.Messages) == 2 && body.Messages[1]["role"] == "system"},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("request: %s: not so", c.name)
		}
	}
	if betas := rec.Header.Values("Anthropic-Beta"); !slices.Contains(betas, "server-side-fallback-2026-07-01") {
		t.Errorf("anthropic-beta = %v", betas)
	}
}

func TestNoFallbackOnModelsWithoutIt(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	if _, err := b.a.Call(context.Background(), provider.Request{Model: "claude-haiku-5-5", Transcript: b.a.InitTranscript("hi")}); err != nil {
		t.Fatal(err)
	}
	rec := b.srv.Requests()[0]
	if bytes.Contains(rec.Body, []byte(`"fallbacks"`)) || rec.Header.Get("Anthropic-Beta") != "" {
		t.Errorf("fallback sent to haiku: %s %v", rec.Body, rec.Header.Get("Anthropic-Beta"))
	}
}

func TestOperatorNoteFallsBackToDelimitedUserNote(t *testing.T) {
	t.Parallel()
	b := setup(t, "name: n\nturns: [{expect: [{operator_note_contains: \"wrap up\"}], text: ok}]\n")
	tr := b.a.AppendOperatorNote(b.a.InitTranscript("hi"), "script:n", "wrap up")
	var m struct {
		Role    string
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(tr[1], &m); err != nil {
		t.Fatal(err)
	}
	if m.Role != "user" || m.Content[0].Text != "<aos-operator-note>\nThis note comes from aos, the system running you, not from the user.\nwrap up\n</aos-operator-note>" {
		t.Errorf("note = %s", tr[1])
	}
	if _, err := b.a.Call(context.Background(), provider.Request{Model: "script:n", Transcript: tr}); err != nil {
		t.Fatal(err)
	}
}

func TestTranscriptIsAppendOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, "")
	base := b.a.InitTranscript("hi")
	base = b.a.AppendUser(base, "one")
	first := slices.Clone(base)
	x := b.a.AppendUser(base, "x")
	y := b.a.AppendUser(base, "y")
	if string(x[2]) == string(y[2]) {
		t.Errorf("appends share storage: %s", x[2])
	}
	for i := range first {
		if !bytes.Equal(first[i], base[i]) {
			t.Errorf("entry %d changed", i)
		}
	}
	// Round trip through JSON (a step result) is byte-identical.
	enc, _ := json.Marshal(x)
	var back provider.Transcript
	if err := json.Unmarshal(enc, &back); err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if !bytes.Equal(back[i], x[i]) {
			t.Errorf("entry %d not byte-identical after JSON: %s vs %s", i, back[i], x[i])
		}
	}
}

func TestListModelsMarksMissingCatalogueModels(t *testing.T) {
	t.Parallel()
	b := setup(t, "models: [claude-haiku-5-5]\nscripts: [{name: s, turns: [{text: hi}]}]\n")
	models, err := b.a.ListModels(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]provider.ModelInfo{}
	for _, m := range models {
		got[m.ID] = m
	}
	if !got["claude-haiku-5-5"].Available || got["claude-opus-5-5"].Available || got["claude-opus-5-5"].ID == "" {
		t.Errorf("availability wrong: %+v", models)
	}
	if m := got["script:s"]; !m.Available || !m.Scripted {
		t.Errorf("script model = %+v", m)
	}
	if _, ok := got["gpt-6-luna"]; ok {
		t.Errorf("OpenAI model listed by Anthropic")
	}
}

func TestPriceUsesCatalogueAndConfiguredModels(t *testing.T) {
	t.Parallel()
	b := setup(t, "", func(c *provider.Config) {
		c.Models = []provider.ModelInfo{{ID: "script:budget", Price: provider.Price{Input: 1, Output: 2}}}
	})
	u := provider.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 5000, CacheWriteTokens: 300}
	// opus 5.5: 1000×4 + 200×20 + 5000×0.20 + 300×5 = 4000+4000+1000+1500 = 10500 µ$ = $0.0105
	if got := b.a.Price("claude-opus-5-5", u); got != 0.0105 {
		t.Errorf("opus price = %v", got)
	}
	if got := b.a.Price("script:budget", u); got != 0.0014 {
		t.Errorf("script price = %v", got)
	}
	if got := b.a.Price("script:free", u); got != 0 {
		t.Errorf("unpriced script = %v", got)
	}
}

// TestBodyCacheFollowsTheRequest: the adapter keeps the last request's
// encoded parameters; every request that differs in what they encode
// (model, system prompt, effort, output cap, a tool's name, description or
// schema, even one changed in place in the caller's slice) must be sent as
// a fresh adapter would send it.
func TestBodyCacheFollowsTheRequest(t *testing.T) {
	t.Parallel()
	cfg := provider.Config{BaseURL: "http://127.0.0.1:1", Getenv: func(string) string { return "k" }}
	cached := anthropic.New(cfg)
	tr := cached.InitTranscript("hi")
	shared := tools() // changed in place below
	base := provider.Request{Model: "claude-opus-5-5", System: "You are aos.", Tools: shared, Transcript: tr}
	for _, tc := range []struct {
		name string
		req  func() provider.Request
	}{
		{"first", func() provider.Request { return base }},
		{"same again", func() provider.Request { return base }},
		{"model", func() provider.Request { r := base; r.Model = "claude-haiku-4-5"; return r }},
		{"system", func() provider.Request { r := base; r.System = "You are someone else."; return r }},
		{"effort", func() provider.Request { r := base; r.Effort = provider.EffortLow; return r }},
		{"output cap", func() provider.Request { r := base; r.MaxOutputTokens = 99; return r }},
		{"no tools", func() provider.Request { r := base; r.Tools = nil; return r }},
		{"tool name", func() provider.Request { r := base; r.Tools = tools(); r.Tools[1].Name = "sh"; return r }},
		{"tool description", func() provider.Request { r := base; r.Tools = tools(); r.Tools[0].Description = "Read."; return r }},
		{"schema changed in place", func() provider.Request {
			copy(shared[0].InputSchema[bytes.Index(shared[0].InputSchema, []byte(`"path"`)):], `"PATH"`)
			return base
		}},
		{"longer transcript", func() provider.Request {
			r := base
			r.Transcript = cached.AppendUser(tr, "more")
			return r
		}},
	} {
		// The cache holds base (or the shared tools, unchanged): the case
		// differs from it in one thing only.
		if _, _, err := cached.Body(base); err != nil {
			t.Fatal(err)
		}
		req := tc.req()
		_, got, err := cached.Body(req)
		if err != nil {
			t.Fatal(err)
		}
		_, want, err := anthropic.New(cfg).Body(req)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the adapter sent\n%s\nwhere a fresh one sends\n%s", tc.name, got, want)
		}
	}
}
