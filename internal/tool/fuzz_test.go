package tool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/tool"
)

// fuzzWorkspace is a workspace with a symlink to outside, a protected
// file and a canary outside.
func fuzzWorkspace(t testing.TB) (ws, outside string) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, outside = filepath.Join(root, "ws"), filepath.Join(root, "outside")
	for _, d := range []string{filepath.Join(ws, "src"), filepath.Join(ws, ".git"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for p, s := range map[string]string{
		filepath.Join(ws, "src/a.txt"):   "hello hello world\n",
		filepath.Join(ws, ".git/config"): "hello\n",
		filepath.Join(ws, "AGENTS.md"):   "hello\n",
		filepath.Join(outside, "secret"): "hello\n",
	} {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	return ws, outside
}

func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{"src/a.txt", "../x", "out/secret", "/etc/passwd", "src/../../ws/src", "a\x00b", ".", "", "//", "src/./a.txt/", "out/../src"} {
		f.Add(s)
	}
	ws, outside := fuzzWorkspace(f)
	f.Fuzz(func(t *testing.T, p string) {
		r, err := tool.ResolvePath(ws, p)
		if err != nil {
			return
		}
		if strings.ContainsRune(p, 0) {
			t.Fatalf("%q: NUL accepted", p)
		}
		if r.Abs != ws && !strings.HasPrefix(r.Abs, ws+"/") {
			t.Fatalf("%q resolved outside: %s", p, r.Abs)
		}
		if strings.HasPrefix(r.Abs, outside) {
			t.Fatalf("%q reached outside: %s", p, r.Abs)
		}
		// Whatever exists of the result must really be inside.
		probe := r.Abs
		for {
			if real, err := filepath.EvalSymlinks(probe); err == nil {
				if real != ws && !strings.HasPrefix(real, ws+"/") {
					t.Fatalf("%q: existing part %s leads to %s", p, probe, real)
				}
				break
			}
			probe = filepath.Dir(probe)
		}
	})
}

func FuzzEditInput(f *testing.F) {
	for _, s := range []string{
		`{"path":"src/a.txt","oldString":"hello","newString":"bye","replaceAll":true}`,
		`{"path":"src/a.txt","oldString":"world","newString":"there","replaceAll":null}`,
		`{"path":"out/secret","oldString":"hello","newString":"pwned","replaceAll":true}`,
		`{"path":".git/config","oldString":"hello","newString":"pwned","replaceAll":true}`,
		`{"path":"AGENTS.md","oldString":"hello","newString":"pwned","replaceAll":true}`,
		`{"path":"../outside/secret","oldString":"hello","newString":"x","replaceAll":true}`,
		`{"path":"src/a.txt","oldString":"","newString":"x"}`,
		`{"path":"src/a.txt","oldString":"h","newString":"x","extra":1}`,
		`[]`, `null`, `{"path":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		ws, outside := fuzzWorkspace(t)
		tc := &tool.Context{Workspace: ws}
		edit := tool.EditFile()
		verr := edit.Validate(json.RawMessage(input))
		res, err := edit.Run(context.Background(), tc, json.RawMessage(input))
		if err != nil {
			t.Fatalf("system error: %v", err)
		}
		if verr != nil && res.OK {
			t.Fatalf("invalid input %q ran: %v", input, verr)
		}
		for p, want := range map[string]string{
			filepath.Join(outside, "secret"): "hello\n",
			filepath.Join(ws, ".git/config"): "hello\n",
			filepath.Join(ws, "AGENTS.md"):   "hello\n",
		} {
			if b, _ := os.ReadFile(p); string(b) != want {
				t.Fatalf("%q changed protected %s to %q", input, p, b)
			}
		}
		ents, _ := os.ReadDir(outside)
		if len(ents) != 1 {
			t.Fatalf("%q created files outside: %v", input, ents)
		}
	})
}

// FuzzWriteFilePath: whatever the path, write_file never writes outside
// the workspace, into .git (other than its temp dir) or over a protected
// file; read_file never returns the outside canary.
func FuzzWriteFilePath(f *testing.F) {
	for _, s := range []string{"src/new.txt", "out/x", "../outside/x", "/etc/x", ".git/hooks/x", "AGENTS.md", "Agents.md", "src/../out/x", "out", ".", "a/b/c/d", "/", "x\x00y", ".GIT/config", "out/canary", "../outside/canary"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		ws, outside := fuzzWorkspace(t)
		if err := os.WriteFile(filepath.Join(outside, "canary"), []byte("OUTSIDE-CANARY\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		tc := &tool.Context{Workspace: ws}
		rin, _ := json.Marshal(map[string]any{"path": strings.ReplaceAll(p, "secret", "canary")})
		if res, _ := tool.ReadFile().Run(context.Background(), tc, rin); strings.Contains(res.Output, "OUTSIDE-CANARY") {
			t.Fatalf("%q: read_file returned the outside canary", p)
		}
		in, _ := json.Marshal(map[string]any{"path": p, "content": "pwned"})
		if _, err := tool.WriteFile().Run(context.Background(), tc, in); err != nil {
			t.Fatalf("%q: system error: %v", p, err)
		}
		for q, want := range map[string]string{
			filepath.Join(outside, "secret"): "hello\n",
			filepath.Join(ws, ".git/config"): "hello\n",
			filepath.Join(ws, "AGENTS.md"):   "hello\n",
		} {
			if b, _ := os.ReadFile(q); string(b) != want {
				t.Fatalf("%q changed %s to %q", p, q, b)
			}
		}
		if ents, _ := os.ReadDir(outside); len(ents) != 2 {
			t.Fatalf("%q created files outside: %v", p, ents)
		}
		if ents, _ := os.ReadDir(filepath.Dir(ws)); len(ents) != 2 {
			t.Fatalf("%q created files beside the workspace: %v", p, ents)
		}
		_ = filepath.WalkDir(filepath.Join(ws, ".git"), func(q string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && q != filepath.Join(ws, ".git/config") {
				t.Fatalf("%q left %s in .git", p, q)
			}
			return nil
		})
	})
}
