package backend

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
)

// Codex CLI adapter (issue 12 §2). Facts from the installed tool (codex-cli
// 0.169.0: `codex --version`, `codex exec --help`, runs against the
// scripted model server), not invented:
//
//	codex exec --json --skip-git-repo-check --sandbox danger-full-access [-m M] PROMPT </dev/null
//
// with CODEX_HOME (in the run's private HOME) holding a config.toml whose
// custom provider points at aos's proxy: model_provider, and
// [model_providers.aos] base_url, env_key, wire_api = "responses".
// Codex's own sandbox is off (danger-full-access): it cannot nest inside
// aos's, which confines it instead. stdout is JSON lines: thread.started,
// turn.started, item.started/item.completed (command_execution,
// agent_message, file_change, error), turn.completed (usage) or
// turn.failed.

var codexVersions = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^codex-cli 0\.1[67]\d\.\d+$`) })

// CodexSupported is the versions the adapter supports, for messages.
const CodexSupported = "codex-cli 0.160–0.179"

func prepareCodex(l *launch, path, model string) error {
	base := l.Request.ModelBaseURL
	if base == "" {
		base = "http://127.0.0.1:1" // no proxy: calls fail at once
	}
	cfg := "model_provider = \"aos\"\n\n[model_providers.aos]\nname = \"aos\"\nbase_url = " + strconv.Quote(base+"/v1") +
		"\nenv_key = \"AOS_MODEL_TOKEN\"\nwire_api = \"responses\"\n"
	if err := writeBeneath(l.Dirs.Home, filepath.Join(".codex", "config.toml"), []byte(cfg)); err != nil {
		return fmt.Errorf("backend: codex config: %w", err)
	}
	l.Argv = []string{path, "exec", "--json", "--skip-git-repo-check", "--sandbox", "danger-full-access"}
	if model != "" {
		l.Argv = append(l.Argv, "-m", model)
	}
	l.Argv = append(l.Argv, claudePrompt(l.Request))
	l.Env = append(l.Env, "CODEX_HOME="+filepath.Join(l.Dirs.Home, ".codex"))
	l.Stdin, l.Parse, l.MaxOut = "/dev/null", codexResult, 64<<20
	return nil
}

type codexLine struct {
	Type  string `json:"type"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
	Item *struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		Command  string `json:"command"`
		ExitCode *int   `json:"exit_code"`
		Message  string `json:"message"`
		Changes  []struct {
			Path string `json:"path"`
			Kind string `json:"kind"`
		} `json:"changes"`
	} `json:"item"`
}

// codexResult: turn.completed is COMPLETED with the last agent message as
// the summary; turn.failed (or no completed turn) is FAILED.
func codexResult(out []byte) (status, summary string, err error) {
	var last, failure string
	completed, seen := false, false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var l codexLine
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		seen = true
		switch l.Type {
		case "item.completed":
			if l.Item != nil && l.Item.Type == "agent_message" {
				last = l.Item.Text
			}
		case "turn.completed":
			completed = true
		case "turn.failed", "error":
			if l.Error != nil {
				failure = l.Error.Message
			}
			completed = false
		}
	}
	if !seen {
		return "", "", badResult("codex printed no JSON events")
	}
	if last == "" {
		last = "(no summary)"
	}
	if completed {
		return StatusCompleted, clip(last, MaxSummaryBytes), nil
	}
	return StatusFailed, clip("codex did not complete its turn: "+failure, MaxSummaryBytes), nil
}

// codexEvent maps command executions, file changes and messages to live
// timeline events.
func codexEvent(line []byte) (map[string]any, bool) {
	var l codexLine
	if json.Unmarshal(line, &l) != nil || l.Item == nil || l.Type != "item.completed" {
		return nil, false
	}
	switch l.Item.Type {
	case "command_execution":
		ev := map[string]any{"engine": "codex", "type": "tool_call", "tool": "shell", "input": clip(l.Item.Command, 300)}
		if l.Item.ExitCode != nil {
			ev["exitCode"] = *l.Item.ExitCode
		}
		return ev, true
	case "file_change":
		var paths []string
		for _, c := range l.Item.Changes {
			paths = append(paths, c.Kind+" "+clip(c.Path, 200))
		}
		return map[string]any{"engine": "codex", "type": "file_change", "changes": paths}, true
	case "agent_message":
		return map[string]any{"engine": "codex", "type": "text", "text": clip(l.Item.Text, 500)}, true
	}
	return nil, false
}
