package backend

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Claude Code adapter (issue 12 §2). Facts from the installed tool
// (`claude --version`, `claude --help`, and a run against the scripted
// model server), not invented:
//
//	claude -p PROMPT --output-format stream-json --verbose --permission-mode acceptEdits [--model M] </dev/null
//
// with ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY (the proxy's, per run),
// CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 and CLAUDE_CODE_MAX_RETRIES.
// stdout is one JSON object per line; the last, {"type":"result"}, has
// subtype "success" and is_error false when the turn completed, and its
// result text. Claude Code edits files itself (acceptEdits) and asks for
// nothing else in print mode: other tools (Bash) are denied, which
// aos's sandbox would confine anyway.

// claudeVersions are the Claude Code versions this adapter was tried with.
var claudeVersions = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^2\.1\.\d+ \(Claude Code\)$`) })

// ClaudeSupported is the versions the adapter supports, for messages.
const ClaudeSupported = "2.1.x"

// claudePrompt is the mission as one prompt.
func claudePrompt(r RuntimeRequest) string {
	var b strings.Builder
	b.WriteString(r.Goal)
	if r.Instructions != "" {
		b.WriteString("\n\nInstructions: " + r.Instructions)
	}
	if len(r.SuccessCriteria) > 0 {
		b.WriteString("\n\nDone when:\n")
		for _, c := range r.SuccessCriteria {
			b.WriteString("- " + c + "\n")
		}
	}
	b.WriteString("\n\nWork only in the current directory. Do not commit or push: aos verifies and commits your changes.")
	return b.String()
}

// claudeArgv is the headless invocation.
func claudeArgv(path, model string, r RuntimeRequest) []string {
	argv := []string{path, "-p", claudePrompt(r), "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits"}
	if model != "" {
		argv = append(argv, "--model", model)
	}
	return argv
}

// claudeEnv are the adapter's variables on top of the proxy's.
var claudeEnv = []string{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "CLAUDE_CODE_MAX_RETRIES=2", "DISABLE_AUTOUPDATER=1"}

// claudeResult reads Claude Code's stream-json output into an engine
// outcome: the last result event decides.
func claudeResult(out []byte) (status, summary string, err error) {
	var last map[string]json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev map[string]json.RawMessage
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		if string(ev["type"]) == `"result"` {
			last = ev
		}
	}
	if last == nil {
		return "", "", badResult("claude printed no result event")
	}
	var subtype, result string
	var isErr bool
	_ = json.Unmarshal(last["subtype"], &subtype)
	_ = json.Unmarshal(last["result"], &result)
	_ = json.Unmarshal(last["is_error"], &isErr)
	if result == "" {
		result = "(no summary)"
	}
	if subtype == "success" && !isErr {
		return StatusCompleted, clip(result, MaxSummaryBytes), nil
	}
	return StatusFailed, clip(fmt.Sprintf("claude ended %s: %s", subtype, result), MaxSummaryBytes), nil
}

// claudeEvent maps one stream-json line to a live timeline event.
func claudeEvent(line []byte) (map[string]any, bool) {
	var ev struct {
		Type    string `json:"type"`
		Message struct {
			Content []struct {
				Type string          `json:"type"`
				Text string          `json:"text"`
				Name string          `json:"name"`
				In   json.RawMessage `json:"input"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &ev) != nil || ev.Type != "assistant" {
		return nil, false
	}
	for _, c := range ev.Message.Content {
		switch c.Type {
		case "tool_use":
			return map[string]any{"engine": "claude", "type": "tool_call", "tool": clip(c.Name, 80), "input": clip(string(c.In), 300)}, true
		case "text":
			return map[string]any{"engine": "claude", "type": "text", "text": clip(c.Text, 500)}, true
		}
	}
	return nil, false
}
