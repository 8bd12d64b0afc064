package engine

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProjectInstructionsHostile: instruction files are read on the host,
// from a workspace the model writes. A symlink to the process environment
// or to a secret outside, or a FIFO, must never reach the prompt (nor
// block); a plain file is read, capped. Issue 10 class 2.
func TestProjectInstructionsHostile(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "id_rsa")
	if err := os.WriteFile(secret, []byte("OWNER-SECRET-KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		setup func(ws string) error
		want  string // "" means no instructions
	}{
		{"environ symlink", func(ws string) error { return os.Symlink("/proc/self/environ", filepath.Join(ws, "AGENTS.md")) }, ""},
		{"secret symlink", func(ws string) error { return os.Symlink(secret, filepath.Join(ws, "AGENTS.md")) }, ""},
		{"relative symlink out", func(ws string) error {
			return os.Symlink(filepath.Join("..", filepath.Base(outside), "id_rsa"), filepath.Join(ws, "CLAUDE.md"))
		}, ""},
		{"fifo", func(ws string) error { return syscall.Mkfifo(filepath.Join(ws, "AGENTS.md"), 0o644) }, ""},
		{"symlink then real CLAUDE.md", func(ws string) error {
			if err := os.Symlink("/proc/self/environ", filepath.Join(ws, "AGENTS.md")); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(ws, "CLAUDE.md"), []byte("use tabs"), 0o644)
		}, "use tabs"},
		{"plain", func(ws string) error {
			return os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte("run make test"), 0o644)
		}, "run make test"},
		{"capped", func(ws string) error {
			return os.WriteFile(filepath.Join(ws, "AGENTS.md"), []byte(strings.Repeat("a", 40<<10)), 0o644)
		}, "[truncated at 32 KiB]"},
	} {
		ws := t.TempDir()
		if err := c.setup(ws); err != nil {
			t.Fatal(err)
		}
		done := make(chan string, 1)
		go func() {
			_, text := projectInstructions(ws)
			done <- text
		}()
		var text string
		select {
		case text = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: projectInstructions blocked", c.name)
		}
		if strings.Contains(text, "PATH=") || strings.Contains(text, "OWNER-SECRET") {
			t.Errorf("%s: secret in the instructions: %.200q", c.name, text)
		}
		if c.want == "" && text != "" || !strings.Contains(text, c.want) {
			t.Errorf("%s: got %.100q, want %q", c.name, text, c.want)
		}
	}
}
