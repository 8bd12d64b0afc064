package tool_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/tool"
)

// TestNonRegularFilesRefusedPromptly: a FIFO with no writer must not block
// a file tool (it blocked read_file forever before): every tool returns
// within the deadline with a refusal, and the FIFO is still there.
// Positive control: a regular file next to it reads fine.
func TestNonRegularFilesRefusedPromptly(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	tc.FileState = map[string]string{"fifo": "x"}
	fifo := filepath.Join(tc.Workspace, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(tc.Workspace, "ok.txt"), "fine\n")
	for _, c := range []struct {
		tl   tool.Tool
		in   map[string]any
		want string
	}{
		{tool.ReadFile(), map[string]any{"path": "fifo"}, "FIFO"},
		{tool.EditFile(), map[string]any{"path": "fifo", "oldString": "a", "newString": "b"}, "FIFO"},
		{tool.WriteFile(), map[string]any{"path": "fifo", "content": "b"}, "FIFO"},
		{tool.Search(""), map[string]any{"query": "a", "mode": "content", "path": "fifo"}, "no matches"},
		{tool.ListDir(), map[string]any{"path": "fifo"}, "not a directory"},
		{tool.ReadFile(), map[string]any{"path": "."}, "directory"},
	} {
		done := make(chan tool.Result, 1)
		go func() {
			res, err := c.tl.Run(context.Background(), tc, js(t, c.in))
			if err != nil {
				res.Output = "system error: " + err.Error()
			}
			done <- res
		}()
		select {
		case res := <-done:
			if !strings.Contains(res.Output, c.want) || (c.want != "no matches" && res.OK) {
				t.Errorf("%s %v: ok=%v %q, want a refusal mentioning %q", c.tl.Name(), c.in, res.OK, res.Output, c.want)
			}
		case <-time.After(5 * time.Second):
			// Unblock the stuck open so the goroutine ends, then fail.
			if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = f.Close()
			}
			t.Fatalf("%s on a FIFO did not return within 5s", c.tl.Name())
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("fifo replaced: %v %v", fi, err)
	}
	if res := run(t, tool.ReadFile(), tc, map[string]any{"path": "ok.txt"}); !res.OK {
		t.Errorf("positive control: %s", res.Output)
	}
}

// TestSymlinksInsideWorkspace: reads may follow a symlink that stays
// inside and key the file state by the real path; writes follow no
// symlink (a parent or the file itself), so a link to a protected path
// cannot be written through.
func TestSymlinksInsideWorkspace(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	ws := tc.Workspace
	write(t, filepath.Join(ws, "src/a.go"), "package a\n")
	write(t, filepath.Join(ws, ".git/config"), "original\n")
	for link, target := range map[string]string{"in": "src", "file-link": "src/a.go", "gitdir": ".git"} {
		if err := os.Symlink(target, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	res := run(t, tool.ReadFile(), tc, map[string]any{"path": "in/a.go"})
	if !res.OK || res.FileStateOut["src/a.go"] == "" {
		t.Errorf("read through an inside symlink: %+v", res)
	}
	for _, p := range []string{"in/b.go", "file-link", "gitdir/config", "gitdir/hooks/pre-commit"} {
		if res := run(t, tool.WriteFile(), tc, map[string]any{"path": p, "content": "x"}); res.OK {
			t.Errorf("write through symlink %s allowed: %s", p, res.Output)
		}
	}
	if got := read(t, filepath.Join(ws, ".git/config")); got != "original\n" {
		t.Errorf(".git/config changed: %q", got)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git/hooks")); err == nil {
		t.Errorf(".git/hooks created through a symlink")
	}
	// The refusal names the real path, so the model can write there.
	for p, want := range map[string]string{"in/new.go": "the real path is src/new.go", "file-link": "the real path is src/a.go"} {
		if res := run(t, tool.WriteFile(), tc, map[string]any{"path": p, "content": "x"}); !strings.Contains(res.Output, want) {
			t.Errorf("write %s: %q lacks %q", p, res.Output, want)
		}
	}
	if res := run(t, tool.WriteFile(), tc, map[string]any{"path": "src/b.go", "content": "x"}); !res.OK {
		t.Errorf("positive control: %s", res.Output)
	}
}
