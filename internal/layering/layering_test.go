// Package layering checks that dependencies between aos packages point down
// (STYLE.md): `cli`/`api` → `mission` → `kernel` ← `engine` → `provider`,
// `tool` → `sandbox`, and `store` imports nothing of ours above it.
//
// It is an allow-list: every package of the module (under internal/ and
// cmd/) must have an entry naming what it may import, so a new package is
// checked from its first commit. It reads the import statements of non-test
// files, so a new violation fails here before review.
package layering

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/aos-run/aos/"

// allowed maps a package, and the packages below it without an entry of
// their own (the longest entry wins), to the aos packages it may import. An
// allowed path admits the packages below it too ("internal/provider" admits
// "internal/provider/registry").
var allowed = map[string][]string{
	"cmd/aos": {"internal/cli"},

	// Front ends: they call the mission service and present its results.
	"internal/cli": {"internal/agent", "internal/api", "internal/auth", "internal/backend", "internal/client", "internal/clients", "internal/config", "internal/control", "internal/demo", "internal/device",
		"internal/engine", "internal/gitx", "internal/hostconfig", "internal/hoststate", "internal/integrate", "internal/kernel", "internal/metrics", "internal/mission",
		"internal/provider", "internal/sandbox", "internal/store", "internal/termtext", "internal/worker"},
	"internal/api": {"internal/agent", "internal/auth", "internal/console", "internal/device", "internal/metrics", "internal/mission", "internal/wire"},
	// The device channel (issue 16): pairing, device tokens and the
	// WebSocket protocol over the agent service; never the mission
	// service, the kernel or another front end.
	"internal/device": {"internal/agent", "internal/store"},
	// The local control socket is a front end: it calls the mission
	// service (and the kernel's event feed), never the store or another
	// front end.
	"internal/control": {"internal/clients", "internal/hoststate", "internal/integrate", "internal/kernel", "internal/mission"},
	// The web console is static assets and their headers; the API mounts it.
	"internal/console": nil,
	// The API client speaks HTTP with the wire types only: it must not link
	// the kernel, the engine or the model SDKs (TestClientDeps checks the
	// whole closure).
	"internal/client": {"internal/wire"},
	// The API's JSON types: a leaf.
	"internal/wire": nil,
	// Tests' build-once helper for real processes: a leaf.
	"internal/testbin": nil,

	// The one owner of the rules, over the kernel.
	"internal/mission": {"internal/backend", "internal/engine", "internal/gitx", "internal/hostconfig", "internal/kernel", "internal/policy",
		"internal/provider", "internal/store", "internal/wire"},
	// Agents, packages and preparation (seed 000): over the mission
	// service (projects, missions), the store and hardened git.
	"internal/agent": {"internal/gitx", "internal/mission", "internal/store"},
	// Owner security rests on the store alone; front ends call it.
	"internal/auth": {"internal/store", "internal/wire"},
	// A worker process: the kernel with the agent loop as its logic.
	"internal/worker": {"internal/backend", "internal/config", "internal/engine", "internal/metrics", "internal/kernel", "internal/policy", "internal/provider", "internal/sandbox",
		"internal/store", "internal/tmpdirs", "internal/tool"},

	// Durable execution knows no agent, model or front end.
	"internal/kernel": {"internal/store"},
	// External engines are kernel logic beside the built-in loop, below
	// every front end.
	"internal/backend": {"internal/gitx", "internal/kernel", "internal/policy", "internal/provider", "internal/sandbox"},
	"internal/engine":  {"internal/gitx", "internal/kernel", "internal/policy", "internal/provider", "internal/sandbox", "internal/tool"},
	// Model adapters: the provider types and each other (registry, compat).
	"internal/provider": {"internal/provider"},
	"internal/tool":     {"internal/gitx", "internal/sandbox"},
	"internal/policy":   nil,
	"internal/sandbox":  {"internal/tmpdirs"},
	// The storage seam and its drivers import nothing of ours above it.
	"internal/store": {"internal/store"},

	// Leaves.
	"internal/config":    nil,
	"internal/gitx":      {"internal/tmpdirs"}, // host git's one hardened runner
	"internal/tmpdirs":   nil,                  // aos's directories under TMPDIR
	"internal/demo":      {"internal/gitx"},
	"internal/termtext":  nil,
	"internal/hoststate": nil, // host state files, stdlib only
	"internal/clients":   nil, // the daemon's client processes, stdlib only
	// Ordered integration of change sets: host git and host state records;
	// the caller loads change sets.
	"internal/integrate": {"internal/gitx", "internal/hoststate"},
	// Project configuration files (.aos/config.yaml).
	"internal/hostconfig": {"internal/termtext"},
	// Prometheus metrics over the store's counts and the model calls.
	"internal/metrics": {"internal/provider", "internal/store"},
	"internal/hostile": nil,
	"internal/soak":    nil,
}

// rule returns the entry that governs pkg: its own, else its nearest
// ancestor's.
func rule(pkg string) (string, bool) {
	for p := pkg; p != "." && p != ""; p = filepath.ToSlash(filepath.Dir(p)) {
		if _, ok := allowed[p]; ok {
			return p, true
		}
	}
	return "", false
}

// admits reports whether an entry's allowed list admits target.
func admits(list []string, target string) bool {
	for _, a := range list {
		if target == a || strings.HasPrefix(target, a+"/") {
			return true
		}
	}
	return false
}

func TestLayering(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	checked := 0
	used := map[string]bool{}
	for _, top := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			pkg := filepath.ToSlash(filepath.Dir(rel))
			if strings.Contains("/"+pkg+"/", "/testdata/") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			checked++
			entry, ok := rule(pkg)
			if !ok {
				t.Errorf("%s: package %s has no entry in layering's allow-list: add it with the aos packages it may import", rel, pkg)
				return nil
			}
			used[entry] = true
			for _, imp := range f.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				if !strings.HasPrefix(p, module) {
					continue
				}
				target := strings.TrimPrefix(p, module)
				if !admits(allowed[entry], target) {
					t.Errorf("%s imports %s: %s may import only %v", rel, target, entry, allowed[entry])
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d files; is the walk rooted right?", checked)
	}
	// An entry for a package that no longer exists is a rule nobody reads.
	var stale []string
	for p := range allowed {
		if !used[p] {
			stale = append(stale, p)
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("allow-list entries for packages that do not exist (or hold no Go file): %v", stale)
	}
}
