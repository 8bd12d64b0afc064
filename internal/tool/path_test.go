package tool_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/aos-run/aos/internal/tool"
)

func TestResolvePath(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	ws := tc.Workspace
	outside := t.TempDir()
	write(t, filepath.Join(ws, "src/a.go"), "package a")
	write(t, filepath.Join(outside, "secret"), "s")
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(ws, "out")))
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(ws, "secret-link")))
	must(os.Symlink(filepath.Join(ws, "src"), filepath.Join(ws, "in")))
	must(os.Symlink(filepath.Join(outside, "missing"), filepath.Join(ws, "dangling")))

	for _, c := range []struct {
		in, rel string // rel "" means refused
	}{
		{"src/a.go", "src/a.go"},
		{"./src/../src/a.go", "src/a.go"},
		{"new/dir/file.txt", "new/dir/file.txt"},
		{filepath.Join(ws, "src/a.go"), "src/a.go"},
		{"in/a.go", "src/a.go"},
		{".", "."},
		{"", ""},
		{"../x", ""},
		{"src/../../x", ""},
		{"/etc/passwd", ""},
		{"out/secret", ""},
		{"out/new-file", ""},
		{"secret-link", ""},
		{"dangling", ""},
		{"dangling/x", ""},
		{"src/a\x00.go", ""},
	} {
		r, err := tool.ResolvePath(ws, c.in)
		if c.rel == "" {
			var pe *tool.PathError
			if !errors.As(err, &pe) {
				t.Errorf("%q: resolved to %q (err %v), want a PathError", c.in, r.Rel, err)
			}
			continue
		}
		if err != nil || r.Rel != c.rel {
			t.Errorf("%q: got %q, %v; want %q", c.in, r.Rel, err, c.rel)
		}
	}
}

func TestProtectedPathsUnwritable(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	ws := tc.Workspace
	for _, p := range []string{".git/config", "AGENTS.md", "CLAUDE.md", ".aos/state", ".bashrc", "sub/.zshrc"} {
		write(t, filepath.Join(ws, p), "original")
	}
	if err := os.Symlink(filepath.Join(ws, ".git/config"), filepath.Join(ws, "innocent")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{".git/config", ".git/hooks/pre-commit", "AGENTS.md", "agents.md", "CLAUDE.md", ".aos/state", ".bashrc", "sub/.zshrc", "innocent", "x/../.git/HEAD", "."} {
		for _, tl := range []tool.Tool{tool.WriteFile(), tool.EditFile()} {
			in := map[string]any{"path": p, "content": "pwned"}
			if tl.Name() == "edit_file" {
				in = map[string]any{"path": p, "oldString": "original", "newString": "pwned"}
			}
			if res := run(t, tl, tc, in); res.OK {
				t.Errorf("%s %s: allowed: %s", tl.Name(), p, res.Output)
			}
		}
	}
	for _, p := range []string{".git/config", "AGENTS.md", "CLAUDE.md", ".aos/state", ".bashrc", "sub/.zshrc"} {
		if got := read(t, filepath.Join(ws, p)); got != "original" {
			t.Errorf("%s changed to %q", p, got)
		}
	}
	// Positive control: an ordinary file and a nested AGENTS.md are writable.
	for _, p := range []string{"src/ok.txt", "docs/AGENTS.md"} {
		if res := run(t, tool.WriteFile(), tc, map[string]any{"path": p, "content": "fine"}); !res.OK {
			t.Errorf("positive control %s: %s", p, res.Output)
		}
	}
}
