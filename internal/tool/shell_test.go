package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/tool"
)

func newSandboxTC(t *testing.T, cfg sandbox.Config) *tool.Context {
	t.Helper()
	tc := newTC(t)
	cfg.StateDir = t.TempDir()
	sb, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tc.Sandbox = sb
	return tc
}

func TestShell(t *testing.T) {
	t.Parallel()
	tc := newSandboxTC(t, sandbox.Config{})
	write(t, filepath.Join(tc.Workspace, ".git/config"), "[core]\n")
	write(t, filepath.Join(tc.Workspace, "AGENTS.md"), "rules")
	for _, c := range []struct {
		name, cmd string
		timeout   any
		ok        bool
		prefix    string
		contains  string
	}{
		{"success", "echo hi", nil, true, "[exit code 0]\nhi\n", ""},
		{"failure", "echo oops >&2; exit 3", nil, false, "[exit code 3]\noops\n", ""},
		{"timeout", "sleep 30", 1, false, "[timed out after 1s", "[exit code "},
		{"git read-only", "echo evil >> .git/config; echo x >> AGENTS.md; echo ok > file.txt; cat file.txt", nil, true, "[exit code 0]", "ok"},
	} {
		res := run(t, tool.Shell(), tc, map[string]any{"command": c.cmd, "timeoutSec": c.timeout})
		if res.OK != c.ok || !strings.HasPrefix(res.Output, c.prefix) || !strings.Contains(res.Output, c.contains) {
			t.Errorf("%s: ok=%v output %q", c.name, res.OK, res.Output)
		}
	}
	if got := read(t, filepath.Join(tc.Workspace, ".git/config")); got != "[core]\n" {
		t.Errorf(".git/config changed through the shell: %q", got)
	}
	if got := read(t, filepath.Join(tc.Workspace, "AGENTS.md")); got != "rules" {
		t.Errorf("AGENTS.md changed through the shell: %q", got)
	}
}

func TestShellFailsClosed(t *testing.T) {
	for _, c := range []struct {
		name string
		tc   func(t *testing.T) *tool.Context
	}{
		{"no sandbox", func(t *testing.T) *tool.Context { return newTC(t) }},
		{"bwrap hidden", func(t *testing.T) *tool.Context {
			t.Setenv("PATH", t.TempDir()) // sandbox.New finds bwrap with exec.LookPath, which reads the process's PATH
			return newSandboxTC(t, sandbox.Config{})
		}},
		{"probe fails", func(t *testing.T) *tool.Context {
			return newSandboxTC(t, sandbox.Config{ProbeCommand: []string{"/bin/false"}})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tc := c.tc(t)
			marker := filepath.Join(tc.Workspace, "ran")
			_, err := tool.Shell().Run(context.Background(), tc, json.RawMessage(`{"command":"touch ran","timeoutSec":null}`))
			var ue *sandbox.UnavailableError
			if !errors.As(err, &ue) || ue.Fix == "" {
				t.Fatalf("err %v, want *sandbox.UnavailableError with a fix", err)
			}
			if _, err := os.Stat(marker); !os.IsNotExist(err) {
				t.Fatal("command ran")
			}
			t.Log(err)
		})
	}
}

func TestFormatShellOutput(t *testing.T) {
	t.Parallel()
	got := tool.FormatShellOutput(sandbox.Outcome{ExitCode: 137, Signal: "SIGKILL", TimedOut: true, OutputExceeded: true, Cancelled: true, Output: []byte("out")}, 0)
	want := "[timed out after 0s; the command and its children were killed]\n[output exceeded 1048576 bytes; the command was killed]\n[cancelled]\n[killed by SIGKILL]\n[exit code 137]\nout"
	if got != want {
		t.Errorf("got %q", got)
	}
}

// TestShellProtectedPathsWhetherOrNotTheyExist: issue 10 class 2. A
// command must not leave AGENTS.md, CLAUDE.md or .aos/ (any letter case)
// behind when they did not exist, nor change a case variant that did.
// Checked from outside, on the workspace; positive control: an ordinary
// file the same command writes stays.
func TestShellProtectedPathsWhetherOrNotTheyExist(t *testing.T) {
	t.Parallel()
	tc := newSandboxTC(t, sandbox.Config{})
	ws := tc.Workspace
	write(t, filepath.Join(ws, "Claude.MD"), "owner rules")
	for _, c := range []struct {
		cmd  string
		gone []string
	}{
		{"ln -s /proc/self/environ AGENTS.md; echo ok > notes.txt", []string{"AGENTS.md"}},
		{"echo evil > agents.md; mkdir .AOS && echo x > .AOS/state; ln -s /etc/passwd CLAUDE.md", []string{"agents.md", ".AOS", "CLAUDE.md"}},
		{"mkdir -p .aos/x; echo evil >> Claude.MD; true", []string{".aos"}},
	} {
		res := run(t, tool.Shell(), tc, map[string]any{"command": c.cmd, "timeoutSec": nil})
		if res.OK || !strings.HasPrefix(res.Output, "[aos removed ") {
			t.Errorf("%q: ok=%v, output lacks the removal note: %q", c.cmd, res.OK, res.Output)
		}
		for _, n := range c.gone {
			if _, err := os.Lstat(filepath.Join(ws, n)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%q: %s left in the workspace (%v)", c.cmd, n, err)
			}
		}
	}
	if got := read(t, filepath.Join(ws, "Claude.MD")); got != "owner rules" {
		t.Errorf("existing case variant changed: %q", got)
	}
	if got := read(t, filepath.Join(ws, "notes.txt")); got != "ok\n" {
		t.Errorf("positive control: notes.txt %q", got)
	}
	if res := run(t, tool.Shell(), tc, map[string]any{"command": "echo fine", "timeoutSec": nil}); !res.OK || strings.Contains(res.Output, "aos removed") {
		t.Errorf("harmless command: %+v", res)
	}
}
