package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/termtext"
)

// engineChecks reads and writes engines' self-test records in settings.
func (s *session) engineCheck(ctx context.Context, engine string) (backend.CheckRecord, bool, error) {
	var rec backend.CheckRecord
	raw, err := s.st.GetSetting(ctx, backend.CheckKey(engine))
	if errors.Is(err, store.ErrNotFound) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, err
	}
	return rec, true, json.Unmarshal(raw, &rec)
}

func newEngineCmd(version string) *cobra.Command {
	cmd := &cobra.Command{Use: "engine", Short: "External engines: list them, and self-test one before it may run missions (docs/ENGINES.md)"}
	var timeoutSec int64
	var model string
	check := &cobra.Command{
		Use:   "check ENGINE",
		Short: "Self-test ENGINE (command:/abs/path, codex, claude or openclaw): it must change a disposable worktree as asked while HEAD stays at the base; only a passed engine is offered",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := backend.ParseEngine(args[0]); err != nil {
				return usage("%v", err)
			}
			s, err := openSession(cmd.Context(), version, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			defer s.close()
			sb, err := sandbox.New(sandbox.ConfigFromEnv(s.getenv, s.cfg.DataDir))
			if err != nil {
				return err
			}
			rec, err := backend.SelfTestWith(cmd.Context(), sb, args[0], "", time.Duration(timeoutSec)*time.Second,
				backend.SelfTestOptions{Proxy: &backend.ProxyConfig{Kernel: s.k, Getenv: s.getenv}, Model: model, Getenv: s.getenv})
			if err != nil {
				return err
			}
			b, _ := json.Marshal(rec)
			if err := s.st.PutSetting(cmd.Context(), backend.CheckKey(args[0]), b, time.Now().UnixMilli()); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if !rec.Passed {
				fmt.Fprintf(out, "%s: FAILED — %s\n", termtext.Line(args[0]), termtext.Line(rec.Reason))
				return &exitError{code: exitFailure, msg: "engine " + args[0] + " failed its self-test"}
			}
			fmt.Fprintf(out, "%s: passed in %d ms (changed %s; HEAD stayed at the base)\n", termtext.Line(args[0]), rec.DurationMS, backend.SelfTestFile)
			return nil
		},
	}
	check.Flags().Int64Var(&timeoutSec, "timeout-sec", 600, "how long the engine may take")
	check.Flags().StringVar(&model, "model", "", "for codex, claude and openclaw: the model its self-test asks, through the metering proxy (the worker's provider key and base URL)")
	ls := &cobra.Command{
		Use:   "ls [ENGINE...]",
		Short: "List the built-in engine, the given command engines and the known tools, with their self-test status",
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openSession(cmd.Context(), version, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			defer s.close()
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "builtin\tavailable (aos's own agent loop)")
			for _, name := range append([]string{"codex", "claude", "openclaw"}, args...) {
				status := "installed"
				if !strings.HasPrefix(name, "command:") {
					if v, err := backend.ToolStatus(cmd.Context(), name, envFrom(cmd.Context())); err != nil {
						fmt.Fprintf(out, "%s\t%s\n", termtext.Line(name), termtext.Line(err.Error()))
						continue
					} else {
						status = v
					}
				}
				rec, found, err := s.engineCheck(cmd.Context(), name)
				switch {
				case err != nil:
					return err
				case backend.Offered(name, rec, found) == nil:
					status += fmt.Sprintf("; offered (self-test passed %s)", time.UnixMilli(rec.CheckedAt).UTC().Format(time.RFC3339))
				case found && !rec.Passed:
					status += "; not offered: self-test failed — " + rec.Reason
				default:
					status += "; not offered: run aos engine check " + name
				}
				fmt.Fprintf(out, "%s\t%s\n", termtext.Line(name), termtext.Line(status))
			}
			return nil
		},
	}
	cmd.AddCommand(check, ls)
	return cmd
}

// engineLine renders an external engine's timeline event (docs/ENGINES.md).
func engineLine(kind string, m map[string]json.RawMessage) string {
	switch kind {
	case "engine.started":
		return fmt.Sprintf("  ▶ engine %s on %s (base %.12s)", termtext.Line(str(m, "engine")), termtext.Line(str(m, "branch")), termtext.Line(str(m, "base")))
	case "engine.finished":
		var sp backend.Spend
		_ = json.Unmarshal(m["spend"], &sp)
		return fmt.Sprintf("  ◀ engine %s: %s (%d model calls, $%.4f)", termtext.Line(str(m, "status")), oneLine(str(m, "summary"), 200), sp.Calls, sp.USD)
	case "verify.command":
		var v backend.VerifyResult
		_ = json.Unmarshal(mustJSON(m), &v)
		what := "refused: " + v.Rule
		if v.Ran {
			what = fmt.Sprintf("exit %d", v.ExitCode)
		}
		return fmt.Sprintf("  ✓? %s — %s", oneLine(strings.Join(v.Argv, " "), 120), termtext.Line(what))
	case "verify.refused":
		return "  ✗ refused: " + oneLine(str(m, "reason"), 300)
	case "engine.event":
		// An engine's own event, live (docs/ENGINES.md): its tool calls,
		// file changes and text.
		eng := termtext.Line(str(m, "engine"))
		switch str(m, "type") {
		case "tool_call":
			line := fmt.Sprintf("  → %s %s %s", eng, termtext.Line(str(m, "tool")), oneLine(str(m, "input"), 160))
			var code *int
			if json.Unmarshal(m["exitCode"], &code) == nil && code != nil {
				line += fmt.Sprintf(" (exit %d)", *code)
			}
			return line
		case "file_change":
			var changes []string
			_ = json.Unmarshal(m["changes"], &changes)
			return fmt.Sprintf("  ✎ %s %s", eng, oneLine(strings.Join(changes, ", "), 200))
		case "tool_summary":
			var tools []string
			_ = json.Unmarshal(m["tools"], &tools)
			return fmt.Sprintf("  ⚙ %s made %s: %s", eng, plural(int(num(m, "calls")), "tool call", "tool calls"), oneLine(strings.Join(tools, ", "), 200))
		case "text":
			return fmt.Sprintf("  %s: %s", eng, oneLine(str(m, "text"), 200))
		}
		return ""
	case "engine.model_call":
		return fmt.Sprintf("  $ %s model call %d ($%.4f so far)", termtext.Line(str(m, "engine")), int(num(m, "calls")), num(m, "usd"))
	case "changeset.recorded":
		return fmt.Sprintf("  ▣ change set %.12s (commit %.12s)", termtext.Line(str(m, "sha256")), termtext.Line(str(m, "commit")))
	}
	return ""
}

// num is a number field of an event payload, 0 when absent.
func num(m map[string]json.RawMessage, k string) float64 {
	var f float64
	_ = json.Unmarshal(m[k], &f)
	return f
}

func mustJSON(m map[string]json.RawMessage) []byte {
	b, _ := json.Marshal(m)
	return b
}
