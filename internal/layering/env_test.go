package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// envReaders are the os functions that read (or change) the process
// environment. os.UserHomeDir and friends read HOME and XDG_* too.
var envReaders = map[string]bool{
	"Getenv": true, "LookupEnv": true, "Environ": true, "ExpandEnv": true,
	"Setenv": true, "Unsetenv": true, "Clearenv": true,
	"UserHomeDir": true, "UserConfigDir": true, "UserCacheDir": true,
}

// envEdge lists the files that may read the process environment, each
// with the reason. Everything else takes the environment as a parameter
// (config.Config.Env, a Getenv field): the CLI's root reads it once and
// passes it down, and tests pass their own.
var envEdge = map[string]string{
	// The edge: the one place the CLI reads the process (its environment,
	// config dir), for the whole command tree.
	"internal/cli/root.go": "the CLI root: reads the process environment once and passes it down (envFrom)",
	// Process entry points that are not the CLI's tree.
	"internal/sandbox/probechild.go": "the probe's inside half, a process of its own inside bwrap: it checks the environment it was given",
	"internal/backend/forward.go":    "ForwarderMain, the in-sandbox forwarder process: its engine child inherits the environment the sandbox gave it",
	"bench/dbos/main.go":             "a benchmark's main: its flag default",
	"bench/load/main.go":             "a benchmark's main: its flag default",
	"bench/scale/main.go":            "a benchmark's main: its flag default",
	"bench/internal/stack/stack.go":  "the benchmarks' process launcher: the aos children get the harness's PATH and TMPDIR",
	// The child's environment, not configuration.
	"internal/gitx/run.go": "host git's minimal environment passes the process's PATH and SSH_AUTH_SOCK through (gitx.Env), as exec would",
	// A security default.
	"internal/sandbox/config.go": "a Config built without HostHome still hides the owner's HOME (os.UserHomeDir), never shows it",
	// Test support, linked only by tests.
	"internal/store/storetest/storetest.go": "the conformance suite's harness finds the test cluster (AOS_TEST_POSTGRES_URL)",
	"internal/testbin/testbin.go":           "go build of a test's program inherits the test's environment, plus CGO_ENABLED=0 (the static build scripts/run.sh makes)",
	"internal/backend/adapter.go":           "installRoot never exposes the owner's HOME as a tool's install root (os.UserHomeDir): a safety default, like the sandbox's HostHome",
}

// TestEnvironmentReadAtTheEdge fails when a non-test file outside envEdge
// calls one of envReaders: the environment is read in one place.
func TestEnvironmentReadAtTheEdge(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	used := map[string]bool{}
	checked := 0
	for _, top := range []string{"internal", "cmd", "bench"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			if strings.Contains("/"+rel, "/testdata/") {
				return nil // test programs, each a main of its own
			}
			checked++
			for _, call := range envCalls(t, path) {
				if _, ok := envEdge[rel]; ok {
					used[rel] = true
					continue
				}
				t.Errorf("%s:%d calls os.%s: take the environment as a parameter (config.Config.Env, a Getenv field) "+
					"from the CLI root, or add the file to envEdge with the reason", rel, call.line, call.name)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d files: is the walk rooted right (%s)?", checked, root)
	}
	for f := range envEdge {
		if !used[f] {
			t.Errorf("envEdge lists %s, which reads no environment: remove the entry", f)
		}
	}
}

type envCall struct {
	name string
	line int
}

// envCalls returns the calls (and references) of envReaders through the
// os package in the file at path, whatever name os is imported under.
func envCalls(t *testing.T, path string) []envCall {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	osName := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "os" {
			osName = "os"
			if imp.Name != nil {
				osName = imp.Name.Name
			}
		}
	}
	if osName == "" || osName == "_" {
		return nil
	}
	var out []envCall
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && id.Name == osName && envReaders[sel.Sel.Name] {
			out = append(out, envCall{name: sel.Sel.Name, line: fset.Position(sel.Pos()).Line})
		}
		return true
	})
	return out
}
