package tool_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/tool"
)

func TestReadFile(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	write(t, filepath.Join(tc.Workspace, "a.txt"), "one\ntwo\nthree\n")
	write(t, filepath.Join(tc.Workspace, "bin.dat"), "ab\x00cd")
	write(t, filepath.Join(tc.Workspace, "latin1.txt"), "caf\xe9\n")
	big := make([]byte, tool.ReadFileMaxBytes+1)
	for i := range big {
		big[i] = 'a'
	}
	write(t, filepath.Join(tc.Workspace, "big.txt"), string(big))
	for _, c := range []struct {
		name string
		in   string
		ok   bool
		want string
	}{
		{"whole", `{"path":"a.txt","startLine":null,"endLine":null}`, true, "     1\tone\n     2\ttwo\n     3\tthree\n"},
		{"range", `{"path":"a.txt","startLine":2,"endLine":2}`, true, "     2\ttwo\n[lines 2-2 of 3]\n"},
		{"missing optional fields", `{"path":"a.txt"}`, true, "     1\tone"},
		{"past end", `{"path":"a.txt","startLine":9,"endLine":null}`, false, "past the end"},
		{"binary", `{"path":"bin.dat"}`, false, "binary"},
		{"invalid utf8", `{"path":"latin1.txt"}`, false, "binary"},
		{"too big", `{"path":"big.txt"}`, false, "at most"},
		{"directory", `{"path":"."}`, false, "directory"},
		{"unknown field", `{"path":"a.txt","extra":1}`, false, "unknown field"},
		{"bad range", `{"path":"a.txt","startLine":3,"endLine":1}`, false, "endLine"},
	} {
		res := run(t, tool.ReadFile(), tc, c.in)
		if res.OK != c.ok || !strings.Contains(res.Output, c.want) {
			t.Errorf("%s: ok=%v output %q, want ok=%v containing %q", c.name, res.OK, res.Output, c.ok, c.want)
		}
	}
	res := run(t, tool.ReadFile(), tc, `{"path":"a.txt"}`)
	if res.FileStateOut["a.txt"] == "" || res.Trust != tool.TrustUntrusted {
		t.Errorf("fileStateOut %v trust %q", res.FileStateOut, res.Trust)
	}
}

func TestEditFile(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	p := filepath.Join(tc.Workspace, "a.go")
	write(t, p, "x := 1\ny := 1\nz := 2\n")
	for _, c := range []struct {
		name string
		in   map[string]any
		ok   bool
		want string // file content afterwards
	}{
		{"absent", map[string]any{"path": "a.go", "oldString": "w := 9", "newString": "w := 8", "replaceAll": nil}, false, "x := 1\ny := 1\nz := 2\n"},
		{"not unique", map[string]any{"path": "a.go", "oldString": ":= 1", "newString": ":= 3", "replaceAll": nil}, false, "x := 1\ny := 1\nz := 2\n"},
		{"unique", map[string]any{"path": "a.go", "oldString": "z := 2", "newString": "z := 5", "replaceAll": false}, true, "x := 1\ny := 1\nz := 5\n"},
		{"replace all", map[string]any{"path": "a.go", "oldString": ":= 1", "newString": ":= 3", "replaceAll": true}, true, "x := 3\ny := 3\nz := 5\n"},
		{"same strings", map[string]any{"path": "a.go", "oldString": "x", "newString": "x", "replaceAll": nil}, false, "x := 3\ny := 3\nz := 5\n"},
		{"missing file", map[string]any{"path": "nope.go", "oldString": "x", "newString": "y", "replaceAll": nil}, false, "x := 3\ny := 3\nz := 5\n"},
	} {
		res := run(t, tool.EditFile(), tc, c.in)
		if res.OK != c.ok {
			t.Errorf("%s: ok=%v, want %v: %s", c.name, res.OK, c.ok, res.Output)
		}
		if got := read(t, p); got != c.want {
			t.Errorf("%s: file %q, want %q", c.name, got, c.want)
		}
		if res.OK && (res.Diff == "" || res.FileStateOut["a.go"] == "") {
			t.Errorf("%s: no diff or file state: %+v", c.name, res)
		}
	}
}

func TestEditStaleness(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	tc.FileState = map[string]string{}
	p := filepath.Join(tc.Workspace, "a.txt")
	write(t, p, "hello world\n")
	edit := map[string]any{"path": "a.txt", "oldString": "hello", "newString": "bye", "replaceAll": nil}

	if res := run(t, tool.EditFile(), tc, edit); res.OK {
		t.Fatalf("edit before any read allowed: %s", res.Output)
	}
	res := run(t, tool.ReadFile(), tc, `{"path":"a.txt"}`)
	for k, v := range res.FileStateOut {
		tc.FileState[k] = v
	}
	write(t, p, "hello there\n") // someone else changes it
	if res := run(t, tool.EditFile(), tc, edit); res.OK || !strings.Contains(res.Output, "changed since") {
		t.Fatalf("stale edit allowed: %s", res.Output)
	}
	if got := read(t, p); got != "hello there\n" {
		t.Fatalf("stale edit wrote: %q", got)
	}
	// Positive control: after reading again the edit applies, and its own
	// result keeps the state fresh for the next edit.
	res = run(t, tool.ReadFile(), tc, `{"path":"a.txt"}`)
	for k, v := range res.FileStateOut {
		tc.FileState[k] = v
	}
	res = run(t, tool.EditFile(), tc, edit)
	if !res.OK {
		t.Fatalf("fresh edit refused: %s", res.Output)
	}
	for k, v := range res.FileStateOut {
		tc.FileState[k] = v
	}
	if res := run(t, tool.EditFile(), tc, map[string]any{"path": "a.txt", "oldString": "there", "newString": "you", "replaceAll": nil}); !res.OK {
		t.Fatalf("edit after own edit refused: %s", res.Output)
	}
	if got := read(t, p); got != "bye you\n" {
		t.Fatalf("file %q", got)
	}
}

func TestWriteFileAtomicKeepsMode(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	p := filepath.Join(tc.Workspace, "run.sh")
	write(t, p, "old")
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	res := run(t, tool.WriteFile(), tc, map[string]any{"path": "run.sh", "content": "#!/bin/sh\n"})
	if !res.OK {
		t.Fatal(res.Output)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o755 || read(t, p) != "#!/bin/sh\n" {
		t.Errorf("mode %v content %q", fi.Mode(), read(t, p))
	}
	res = run(t, tool.WriteFile(), tc, map[string]any{"path": "deep/new/file.txt", "content": "x"})
	if !res.OK || read(t, filepath.Join(tc.Workspace, "deep/new/file.txt")) != "x" {
		t.Errorf("nested create: %s", res.Output)
	}
	ents, _ := os.ReadDir(tc.Workspace)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".aos-write-") {
			t.Errorf("temp file left: %s", e.Name())
		}
	}
}

func TestListDir(t *testing.T) {
	t.Parallel()
	tc := newTC(t)
	write(t, filepath.Join(tc.Workspace, "d/f.txt"), "abc")
	res := run(t, tool.ListDir(), tc, `{"path":null}`)
	if !res.OK || !strings.Contains(res.Output, "d/") {
		t.Errorf("%+v", res)
	}
	res = run(t, tool.ListDir(), tc, `{"path":"d"}`)
	if !res.OK || !strings.Contains(res.Output, "f.txt (3 bytes)") {
		t.Errorf("%+v", res)
	}
	if res := run(t, tool.ListDir(), tc, `{"path":"../"}`); res.OK {
		t.Errorf("listed outside: %s", res.Output)
	}
}
