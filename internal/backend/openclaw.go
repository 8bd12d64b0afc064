package backend

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// OpenClaw adapter (issue 12 §2). Facts from the installed tool (OpenClaw
// 2026.9.6: `openclaw --version`, `openclaw agent exec --help`, its
// docs/cli/agent.md, and runs against the scripted model server), not
// invented:
//
//	openclaw agent exec --config F --model aos/M --json --cwd WORKTREE --message-file - --timeout S  <prompt
//
// `agent exec` is OpenClaw's documented headless entry point: one embedded
// agent turn, no Gateway, a temporary state directory removed afterwards,
// its own agent sandbox off by default. --config pins the run to a config
// file aos writes in the run's private HOME with one custom provider (aos's
// proxy, api "openai-responses", apiKey the per-run credential) and
// models.mode "replace" (no provider discovery). --auth-env-only is not
// used: OpenClaw refuses it together with --config, and without a config
// it has no way to name aos's proxy. OpenClaw hard-codes /tmp for its state
// locks, so it runs with a private writable /tmp (sandbox.Spec.PrivateTmp),
// and Node 24's worker threads need a larger RLIMIT_DATA (Spec.MaxData).
// stdout is one JSON envelope at the end: {ok, status: ok|error|timeout,
// final, usage, toolSummary{calls, tools}, error{message, kind}}.

var openclawVersions = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^OpenClaw 2026\.9\.\d+( \([0-9a-f]+\))?$`) })

// OpenClawSupported is the versions the adapter supports, for messages.
const OpenClawSupported = "OpenClaw 2026.9.x"

// openclawMaxData is OpenClaw's RLIMIT_DATA (see prepareOpenClaw).
const openclawMaxData = 32 << 30

// openclawProvider is the custom provider's id in the pinned config.
const openclawProvider = "aos"

func prepareOpenClaw(l *launch, path, model string) error {
	base := l.Request.ModelBaseURL
	if base == "" {
		base = "http://127.0.0.1:1" // no proxy: calls fail at once
	}
	if model == "" {
		return fmt.Errorf("backend: engine openclaw needs a model (its custom provider lists it)")
	}
	key := ""
	for _, kv := range l.Env {
		if v, ok := strings.CutPrefix(kv, "AOS_MODEL_TOKEN="); ok {
			key = v
		}
	}
	if key == "" {
		key = "aos-no-proxy"
	}
	cfg := map[string]any{"models": map[string]any{"mode": "replace", "providers": map[string]any{openclawProvider: map[string]any{
		"baseUrl": base + "/v1", "apiKey": key, "api": "openai-responses",
		"models": []any{map[string]any{"id": model, "name": model, "reasoning": false, "input": []string{"text"},
			"contextWindow": 200000, "maxTokens": 8192}},
	}}}}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("backend: openclaw config: %w", err)
	}
	conf := filepath.Join(l.Dirs.Home, "aos-openclaw.json")
	prompt := filepath.Join(l.Dirs.Home, "aos-openclaw-prompt.txt")
	if err := writeBeneath(l.Dirs.Home, filepath.Base(conf), b); err != nil {
		return fmt.Errorf("backend: openclaw config: %w", err)
	}
	if err := writeBeneath(l.Dirs.Home, filepath.Base(prompt), []byte(claudePrompt(l.Request))); err != nil {
		return fmt.Errorf("backend: openclaw prompt: %w", err)
	}
	secs := int64(l.Timeout.Seconds())
	if secs <= 0 {
		secs = int64(defaultEngineTimeout.Seconds())
	}
	l.Argv = []string{path, "agent", "exec", "--config", conf, "--model", openclawProvider + "/" + model, "--json",
		"--cwd", l.Workspace, "--message-file", "-", "--timeout", strconv.FormatInt(secs, 10)}
	l.Env = append(l.Env, "NO_COLOR=1")
	l.Stdin, l.Parse, l.MaxOut, l.PrivateTmp = prompt, openclawResult, 16<<20, true
	// Node 24 reserves about 0.5 GiB of address space per worker thread,
	// and OpenClaw starts more than eight: the default RLIMIT_DATA (4 GiB)
	// kills it at start ("Failed to reserve virtual memory for CodeRange").
	l.MaxData = openclawMaxData
	return nil
}

// openclawEnvelope is agent exec's --json envelope.
type openclawEnvelope struct {
	OK     *bool  `json:"ok"`
	Status string `json:"status"`
	Final  string `json:"final"`
	Error  *struct {
		Message string `json:"message"`
		Kind    string `json:"kind"`
	} `json:"error"`
	AssistantTurns int `json:"assistantTurns"`
	ToolSummary    *struct {
		Calls int      `json:"calls"`
		Tools []string `json:"tools"`
	} `json:"toolSummary"`
}

// decodeOpenClaw reads the envelope: the JSON object that starts a line
// of stdout (the whole of stdout, as documented; diagnostics go to stderr).
func decodeOpenClaw(out []byte) (openclawEnvelope, error) {
	var env openclawEnvelope
	i := bytes.Index(out, []byte("{"))
	if i < 0 {
		return env, badResult("openclaw printed no JSON envelope")
	}
	d := json.NewDecoder(bytes.NewReader(out[i:]))
	if err := d.Decode(&env); err != nil {
		return env, badResult("openclaw's JSON envelope: %s", err.Error())
	}
	if env.OK == nil || env.Status == "" {
		return env, badResult("openclaw's JSON envelope has no ok and status")
	}
	return env, nil
}

// openclawResult: ok with status "ok" is COMPLETED with the final text as
// the summary; anything else FAILED with OpenClaw's error.
func openclawResult(out []byte) (status, summary string, err error) {
	env, err := decodeOpenClaw(out)
	if err != nil {
		return "", "", err
	}
	final := env.Final
	if final == "" {
		final = "(no summary)"
	}
	if *env.OK && env.Status == "ok" {
		return StatusCompleted, clip(final, MaxSummaryBytes), nil
	}
	why := env.Status
	if env.Error != nil {
		why += ": " + env.Error.Kind + " " + env.Error.Message
	}
	return StatusFailed, clip("openclaw ended "+why, MaxSummaryBytes), nil
}

// openclawEvents maps the envelope, which OpenClaw prints once at the
// end, to timeline events: its tool calls and its final text.
func openclawEvents(out []byte) []map[string]any {
	env, err := decodeOpenClaw(out)
	if err != nil {
		return nil
	}
	var evs []map[string]any
	if env.ToolSummary != nil {
		tools := make([]string, 0, len(env.ToolSummary.Tools))
		for _, t := range env.ToolSummary.Tools {
			tools = append(tools, clip(t, 80))
		}
		evs = append(evs, map[string]any{"engine": "openclaw", "type": "tool_summary", "calls": env.ToolSummary.Calls, "tools": tools, "turns": env.AssistantTurns})
	}
	if env.Final != "" {
		evs = append(evs, map[string]any{"engine": "openclaw", "type": "text", "text": clip(env.Final, 500)})
	}
	return evs
}
