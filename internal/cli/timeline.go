package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/store"
)

var errMissionEnded = errors.New("mission ended")

// timeline prints a mission's events as a readable terminal log and
// handles its waits (interactive on a TTY, printed commands otherwise).
type timeline struct {
	s         *session
	missionID string
	rootRun   string
	in        *bufio.Reader
}

func newTimeline(s *session, missionID string) *timeline {
	return &timeline{s: s, missionID: missionID, in: bufio.NewReader(os.Stdin)}
}

func (t *timeline) run(ctx context.Context) error {
	m, err := t.s.k.GetMission(ctx, t.missionID)
	if err != nil {
		return err
	}
	t.rootRun = m.RootRunID
	if kernel.IsTerminal(m.Status) {
		t.printf("mission %s already ended: %s\n", t.missionID, m.Status)
		return errMissionEnded
	}
	return t.s.k.ListenEvents(ctx, 0, t.missionID, func(e store.Event) error { return t.event(ctx, e) })
}

func (t *timeline) printf(format string, a ...any) {
	if !t.s.json {
		fmt.Fprintf(t.s.out, format, a...)
	}
}

func (t *timeline) event(ctx context.Context, e store.Event) error {
	var p map[string]json.RawMessage
	_ = json.Unmarshal(e.Payload, &p)
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(p[k], &s)
		return s
	}
	switch e.Kind {
	case "mission.created":
		t.printf("● mission %s\n", t.missionID)
	case "run.claimed":
		var n int
		_ = json.Unmarshal(p["replaySteps"], &n)
		if n > 0 {
			t.printf("  (resumed: replaying %d journaled steps)\n", n)
		}
	case "step.completed":
		t.stepCompleted(str("kind"), str("name"), p)
	case "step.started":
		if str("kind") == "tool_call" {
			var req struct {
				Input json.RawMessage `json:"input"`
			}
			_ = json.Unmarshal(p["request"], &req)
			t.printf("  → %s %s\n", str("name"), oneLine(string(req.Input), 100))
		}
	case "step.failed":
		t.printf("  ✗ step %s failed: %s\n", str("name"), oneLine(string(p["error"]), 200))
	case "policy.decision":
		if d := str("decision"); d != "allow" || str("source") != "default" {
			t.printf("  ⚖ %s %s (%s: %s)\n", d, str("tool"), str("source"), str("reason"))
		}
	case "run.usage":
		var u struct {
			Usage kernel.Usage `json:"usage"`
		}
		_ = json.Unmarshal(e.Payload, &u)
		t.printf("  $ %.4f spent · %d turns\n", u.Usage.CostUSD, u.Usage.Turns)
	case "system.notice":
		t.printf("  ℹ %s\n", str("message"))
	case "owner.message":
		t.printf("  ✉ owner: %s\n", oneLine(str("text"), 200))
	case "wait.created":
		return t.waitCreated(ctx, str("waitId"), str("kind"), p["payload"])
	case "wait.resolved":
		t.printf("  ✓ wait %s %s\n", short(str("waitId")), str("status"))
	case "run.completed":
		if e.RunID == t.rootRun {
			t.printf("■ %s — %s\n", str("status"), str("summary"))
			return errMissionEnded
		}
	}
	return nil
}

func (t *timeline) stepCompleted(kind, name string, p map[string]json.RawMessage) {
	switch kind {
	case "model_call":
		var r struct {
			Blocks  []provider.Block `json:"blocks"`
			Failure *struct {
				Message string `json:"message"`
			} `json:"failure"`
		}
		_ = json.Unmarshal(p["result"], &r)
		if r.Failure != nil {
			t.printf("  ! model call failed: %s\n", oneLine(r.Failure.Message, 200))
		}
		for _, b := range r.Blocks {
			switch b.Type {
			case provider.BlockThinking:
				if b.Text != "" {
					t.printf("  (thinking) %s\n", oneLine(b.Text, 160))
				}
			case provider.BlockText:
				if strings.TrimSpace(b.Text) != "" {
					t.printf("  %s\n", indent(b.Text))
				}
			}
		}
	case "tool_call":
		var r struct {
			OK      bool   `json:"ok"`
			Content string `json:"content"`
			Diff    string `json:"diff"`
		}
		_ = json.Unmarshal(p["result"], &r)
		mark := "✓"
		if !r.OK {
			mark = "✗"
		}
		t.printf("    %s %s\n", mark, fold(r.Content, 3, "      "))
		if r.Diff != "" {
			t.printf("      %s\n", fold(r.Diff, 12, "      "))
		}
	}
}

// waitCreated asks the owner on a TTY, denies under --on-ask deny, or
// prints the commands that resolve the wait and keeps waiting.
func (t *timeline) waitCreated(ctx context.Context, waitID, kind string, payload json.RawMessage) error {
	w, err := t.s.st.GetWait(ctx, waitID)
	if err != nil || w.Status != "pending" {
		return nil // resolved already (a replayed timeline)
	}
	var p struct {
		Tool    string   `json:"tool"`
		Title   string   `json:"title"`
		Detail  string   `json:"detail"`
		Reason  string   `json:"reason"`
		Diff    string   `json:"diff"`
		Text    string   `json:"text"`
		Options []string `json:"options"`
	}
	_ = json.Unmarshal(payload, &p)
	if kind == "approval" {
		t.printf("  ? approval needed: %s — %s\n    %s\n", p.Title, p.Reason, oneLine(p.Detail, 300))
		if p.Diff != "" {
			t.printf("      %s\n", fold(p.Diff, 20, "      "))
		}
	} else {
		t.printf("  ? question: %s\n", indentBy(p.Text, "    "))
		for i, o := range p.Options {
			t.printf("      %d. %s\n", i+1, o)
		}
	}
	switch {
	case t.s.onAsk == "deny":
		var res any = map[string]any{"approved": false, "reason": "aos run --on-ask deny"}
		if kind != "approval" {
			res = map[string]string{"answer": "(no answer: aos run --on-ask deny)"}
		}
		_, err := t.s.k.ResolveWait(ctx, waitID, res, "aos run --on-ask deny")
		if errors.Is(err, kernel.ErrWaitNotPending) {
			return nil
		}
		return err
	case t.s.tty && !t.s.json:
		return t.ask(ctx, waitID, kind, p.Options)
	}
	t.printf("    waiting for the owner. Resolve it from another terminal:\n")
	if kind == "approval" {
		t.printf("      aos approve %s [--remember]\n      aos deny %s [--reason TEXT]\n", waitID, waitID)
	} else {
		t.printf("      aos answer %s \"TEXT\"\n", waitID)
	}
	return nil
}

func (t *timeline) ask(ctx context.Context, waitID, kind string, options []string) error {
	var res any
	if kind == "approval" {
		fmt.Fprint(t.s.out, "    approve? [y]es / [n]o / [a]lways for this project: ")
		line, _ := t.in.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			res = map[string]any{"approved": true}
		case "a", "always":
			res = map[string]any{"approved": true, "remember": true}
		default:
			res = map[string]any{"approved": false, "reason": "denied at the terminal"}
		}
	} else {
		fmt.Fprint(t.s.out, "    answer (a number or text): ")
		line, _ := t.in.ReadString('\n')
		line = strings.TrimSpace(line)
		if n, err := strconv.Atoi(line); err == nil && n >= 1 && n <= len(options) {
			line = options[n-1]
		}
		res = map[string]string{"answer": line}
	}
	_, err := t.s.k.ResolveWait(ctx, waitID, res, "owner (terminal)")
	if errors.Is(err, kernel.ErrWaitNotPending) {
		return nil // resolved elsewhere meanwhile
	}
	return err
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// fold keeps the first lines of s, joined with newline+pre.
func fold(s string, lines int, pre string) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > lines {
		ls = append(ls[:lines], fmt.Sprintf("… (%d more lines)", len(ls)-lines))
	}
	return strings.Join(ls, "\n"+pre)
}

func indent(s string) string { return indentBy(strings.TrimSpace(s), "  ") }

func indentBy(s, pre string) string {
	return strings.ReplaceAll(s, "\n", "\n"+pre)
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
