package tool_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/tool"
)

func TestSearch(t *testing.T) {
	t.Parallel()
	rg, _ := exec.LookPath("rg")
	tc := newTC(t)
	write(t, filepath.Join(tc.Workspace, "src/main.go"), "package main\nfunc Hello() {}\n")
	write(t, filepath.Join(tc.Workspace, "src/other.go"), "package main\n")
	write(t, filepath.Join(tc.Workspace, "README.md"), "hello docs\n")
	for _, impl := range []struct {
		name string
		tl   tool.Tool
	}{{"ripgrep", tool.Search(rg)}, {"walk", tool.Search("")}} {
		if impl.name == "ripgrep" && rg == "" {
			t.Log("ripgrep not installed; testing the walk only")
			continue
		}
		for _, c := range []struct {
			in   string
			want []string
			not  []string
		}{
			{`{"query":"func Hel+o","mode":"content","path":null}`, []string{"src/main.go:2:func Hello() {}"}, []string{"README"}},
			{`{"query":"package","mode":"content","path":"src"}`, []string{"src/main.go:1:", "src/other.go:1:"}, nil},
			{`{"query":"OTHER","mode":"name","path":null}`, []string{"src/other.go"}, []string{"main.go"}},
			{`{"query":"nothing-matches-this","mode":"content","path":null}`, []string{"no matches"}, nil},
		} {
			res := run(t, impl.tl, tc, c.in)
			if !res.OK {
				t.Errorf("%s %s: %s", impl.name, c.in, res.Output)
			}
			for _, w := range c.want {
				if !strings.Contains(res.Output, w) {
					t.Errorf("%s %s: output %q lacks %q", impl.name, c.in, res.Output, w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(res.Output, n) {
					t.Errorf("%s %s: output %q has %q", impl.name, c.in, res.Output, n)
				}
			}
		}
		if res := run(t, impl.tl, tc, `{"query":"x","mode":"content","path":"../"}`); res.OK {
			t.Errorf("%s: searched outside the workspace", impl.name)
		}
	}
}
