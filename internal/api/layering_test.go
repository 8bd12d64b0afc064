package api_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayering: handlers decide nothing, so the api reaches the kernel and
// the store only through the mission service; and the service imports no
// front end.
func TestLayering(t *testing.T) {
	t.Parallel()
	for dir, forbidden := range map[string][]string{
		".":          {"internal/kernel", "internal/store", "internal/engine", "internal/cli"},
		"../mission": {"internal/api", "internal/cli", "internal/console", "internal/control"},
	} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				for _, fb := range forbidden {
					if strings.HasPrefix(p, "github.com/aos-run/aos/"+fb) {
						t.Errorf("%s imports %s", f, p)
					}
				}
			}
		}
	}
}
