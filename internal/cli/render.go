package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/termtext"
)

// eventPrinter renders timeline events as terminal lines. The local
// timeline (aos run) and the remote one (aos mission watch) share it; each
// handles waits and the mission's end itself.
type eventPrinter struct {
	out   io.Writer
	quiet bool // --json: print nothing
	// midLine: streamed model text (model.delta) left the cursor mid-line.
	midLine bool
	// streamed: this turn's text was streamed, so the model_call's
	// completion does not print it again.
	streamed bool
}

func (p *eventPrinter) printf(format string, a ...any) {
	if p.quiet {
		return
	}
	if p.midLine {
		fmt.Fprintln(p.out)
		p.midLine = false
	}
	// Every line an eventPrinter prints goes through termtext: the text
	// is the model's, the tools' or the server's, and is never interpreted.
	_, _ = io.WriteString(p.out, termtext.Block(fmt.Sprintf(format, a...)))
}

// payloadOf decodes an event payload's top-level fields.
func payloadOf(b []byte) map[string]json.RawMessage {
	var p map[string]json.RawMessage
	_ = json.Unmarshal(b, &p)
	return p
}

func str(p map[string]json.RawMessage, k string) string {
	var s string
	_ = json.Unmarshal(p[k], &s)
	return s
}

// render prints one event of a kind every timeline shows the same way;
// it returns false for kinds it leaves to the caller (wait.created,
// run.completed) or ignores.
func (p *eventPrinter) render(missionID, kind string, payload []byte) bool {
	m := payloadOf(payload)
	switch kind {
	case "mission.created":
		p.printf("● mission %s\n", missionID)
	case "run.claimed":
		var n int
		_ = json.Unmarshal(m["replaySteps"], &n)
		if n > 0 {
			p.printf("  (resumed: replaying %d journaled steps)\n", n)
		}
	case "step.completed":
		p.stepCompleted(str(m, "kind"), m)
	case "step.started":
		if str(m, "kind") == "tool_call" {
			var req struct {
				Input json.RawMessage `json:"input"`
			}
			_ = json.Unmarshal(m["request"], &req)
			p.printf("  → %s %s\n", str(m, "name"), oneLine(string(req.Input), 100))
		}
	case "step.failed":
		p.printf("  ✗ step %s failed: %s\n", str(m, "name"), oneLine(string(m["error"]), 200))
	case "policy.decision":
		if d := str(m, "decision"); d != "allow" || str(m, "source") != "default" {
			p.printf("  ⚖ %s %s (%s: %s)\n", termtext.Line(d), termtext.Line(str(m, "tool")), termtext.Line(str(m, "source")), termtext.Line(str(m, "reason")))
			if why := str(m, "notRemembered"); why != "" {
				p.printf("    not remembered: %s\n", termtext.Line(why))
			}
		}
	case "run.usage":
		var u struct {
			Usage kernel.Usage `json:"usage"`
		}
		_ = json.Unmarshal(payload, &u)
		p.printf("  $ %.4f spent · %s\n", u.Usage.CostUSD, plural(u.Usage.Turns, "turn", "turns"))
	case "system.notice":
		p.printf("  ℹ %s\n", oneLine(str(m, "message"), 500))
	case "engine.started", "engine.finished", "verify.command", "verify.refused", "changeset.recorded", "engine.event", "engine.model_call":
		if line := engineLine(kind, m); line != "" {
			p.printf("%s\n", line)
		}
	case "owner.message":
		p.printf("  ✉ owner: %s\n", oneLine(str(m, "text"), 200))
	case "wait.resolved":
		p.printf("  ✓ wait %s %s\n", termtext.Line(short(str(m, "waitId"))), termtext.Line(str(m, "status")))
	case "model.delta":
		p.delta(m)
	default:
		return false
	}
	return true
}

// delta streams a model.delta's text inline.
func (p *eventPrinter) delta(m map[string]json.RawMessage) {
	if p.quiet || str(m, "type") != "text" {
		return
	}
	text := str(m, "text")
	if text == "" {
		return
	}
	if !p.midLine {
		fmt.Fprint(p.out, "  ")
	}
	_, _ = io.WriteString(p.out, termtext.Block(strings.ReplaceAll(text, "\n", "\n  ")))
	p.midLine, p.streamed = true, true
}

func (p *eventPrinter) stepCompleted(kind string, m map[string]json.RawMessage) {
	switch kind {
	case "model_call":
		var r struct {
			Blocks  []provider.Block `json:"blocks"`
			Failure *struct {
				Message string `json:"message"`
			} `json:"failure"`
		}
		_ = json.Unmarshal(m["result"], &r)
		streamed := p.streamed
		p.streamed = false
		if r.Failure != nil {
			p.printf("  ! model call failed: %s\n", oneLine(r.Failure.Message, 200))
		}
		for _, b := range r.Blocks {
			switch b.Type {
			case provider.BlockThinking:
				if b.Text != "" {
					p.printf("  (thinking) %s\n", oneLine(b.Text, 160))
				}
			case provider.BlockText:
				if strings.TrimSpace(b.Text) != "" && !streamed {
					p.printf("  %s\n", indent(b.Text))
				}
			}
		}
		if streamed && p.midLine {
			p.printf("")
		}
	case "tool_call":
		var r struct {
			OK      bool   `json:"ok"`
			Content string `json:"content"`
			Diff    string `json:"diff"`
		}
		_ = json.Unmarshal(m["result"], &r)
		mark := "✓"
		if !r.OK {
			mark = "✗"
		}
		p.printf("    %s %s\n", mark, fold(r.Content, 3, "      "))
		if r.Diff != "" {
			p.printf("      %s\n", fold(r.Diff, 12, "      "))
		}
	}
}

// waitPayload is a wait.created (or wait) payload's displayed fields.
type waitPayload struct {
	Tool    string   `json:"tool"`
	Title   string   `json:"title"`
	Detail  string   `json:"detail"`
	Reason  string   `json:"reason"`
	Diff    string   `json:"diff"`
	Text    string   `json:"text"`
	Options []string `json:"options"`
}

// printWait prints a pending approval or question and, unless the caller
// asks at the terminal, the commands that resolve it.
func (p *eventPrinter) printWait(waitID, kind string, payload json.RawMessage, commands bool) waitPayload {
	var w waitPayload
	_ = json.Unmarshal(payload, &w)
	if kind == "approval" {
		p.approval(w)
		if w.Diff != "" {
			p.printf("      %s\n", fold(w.Diff, 20, "      "))
		}
	} else {
		p.printf("  ? question: %s\n", indentBy(w.Text, "    "))
		for i, o := range w.Options {
			p.printf("      %d. %s\n", i+1, termtext.Line(o))
		}
	}
	if commands {
		p.printf("    waiting for the owner. Resolve it from another terminal:\n")
		if kind == "approval" {
			p.printf("      aos approve %s [--remember]\n      aos deny %s [--reason TEXT]\n", termtext.Line(waitID), termtext.Line(waitID))
		} else {
			p.printf("      aos answer %s \"TEXT\"\n", termtext.Line(waitID))
		}
	}
	return w
}

// approval prints what the owner is asked to approve: the tool's exact
// detail (for the shell, the exact command), in full, with control
// characters and escape sequences visibly escaped, and a warning when
// there were any, since a terminal would have shown something else.
func (p *eventPrinter) approval(w waitPayload) {
	p.printf("  ? approval needed: %s — %s\n", termtext.Line(w.Title), termtext.Line(w.Reason))
	label := "detail"
	if w.Tool == "shell" {
		label = "command"
	}
	p.printf("    %s (exact, in full):\n      %s\n", label, indentBy(termtext.Block(w.Detail), "      "))
	if termtext.Controls(w.Detail) {
		p.printf("    ⚠ WARNING: this %s holds control characters or escape sequences, shown escaped above (\\x1b …);\n"+
			"      a terminal printing it raw would show something other than what runs.\n", label)
	}
}
