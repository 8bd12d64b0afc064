// Package layering checks that dependencies between aos packages point down
// (STYLE.md): store imports nothing of ours above it, kernel imports no
// agent or front-end code, and so on. It reads import statements of
// non-test files, so a new violation fails here before review.
package layering

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/aos-run/aos/"

// rules maps a package prefix to the aos package prefixes it must not
// import.
var rules = []struct {
	pkg       string
	forbidden []string
	onlyOwn   bool // may import nothing of ours outside its own tree
}{
	{pkg: "internal/store", onlyOwn: true},
	{pkg: "internal/sandbox", onlyOwn: true},
	{pkg: "internal/kernel", forbidden: []string{"internal/engine", "internal/provider", "internal/tool", "internal/policy", "internal/sandbox",
		"internal/api", "internal/cli", "internal/mission", "internal/worker", "internal/console", "internal/backend", "internal/catalog"}},
	{pkg: "internal/provider", forbidden: []string{"internal/kernel", "internal/store", "internal/engine", "internal/tool", "internal/policy", "internal/cli", "internal/api"}},
	{pkg: "internal/tool", forbidden: []string{"internal/kernel", "internal/store", "internal/engine", "internal/provider", "internal/cli", "internal/api"}},
	{pkg: "internal/config", onlyOwn: true},
	// External engines are kernel logic beside the built-in loop, below
	// every front end.
	{pkg: "internal/backend", forbidden: []string{"internal/engine", "internal/api", "internal/cli", "internal/mission", "internal/worker",
		"internal/console", "internal/store"}},
	// Host git's one hardened runner depends on nothing of ours.
	{pkg: "internal/gitx", onlyOwn: true},
	// The console is static assets and their headers; the api mounts it.
	{pkg: "internal/console", onlyOwn: true},
	// Owner security rests on the store alone; front ends call it.
	{pkg: "internal/auth", forbidden: []string{"internal/mission", "internal/kernel", "internal/engine", "internal/provider", "internal/tool",
		"internal/policy", "internal/sandbox", "internal/api", "internal/cli", "internal/worker", "internal/console"}},
	// Host state is stdlib only.
	{pkg: "internal/hoststate", onlyOwn: true},
	// The control socket is a front end: it calls mission, never the store
	// or another front end.
	{pkg: "internal/control", forbidden: []string{"internal/store", "internal/cli", "internal/api", "internal/console", "internal/client",
		"internal/engine", "internal/worker", "internal/sandbox", "internal/provider", "internal/tool"}},
	// The API client speaks HTTP with the mission and api types only.
	{pkg: "internal/client", forbidden: []string{"internal/kernel", "internal/store", "internal/engine", "internal/worker", "internal/cli",
		"internal/provider", "internal/tool", "internal/policy", "internal/sandbox"}},
}

func TestLayering(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	checked := 0
	err := filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, module) {
				continue
			}
			target := strings.TrimPrefix(p, module)
			for _, r := range rules {
				if !strings.HasPrefix(rel, r.pkg+"/") {
					continue
				}
				if r.onlyOwn && !strings.HasPrefix(target, r.pkg) {
					t.Errorf("%s imports %s: %s must import nothing of ours outside itself", rel, target, r.pkg)
				}
				for _, fb := range r.forbidden {
					if target == fb || strings.HasPrefix(target, fb+"/") {
						t.Errorf("%s imports %s: %s must not depend on %s", rel, target, r.pkg, fb)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 20 {
		t.Fatalf("checked only %d files; is the walk rooted right?", checked)
	}
}
