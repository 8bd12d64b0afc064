package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/tool"
)

// memArtifacts is an in-memory Artifacts.
type memArtifacts struct {
	mu sync.Mutex // guards m
	m  map[string][]byte
}

func (a *memArtifacts) Put(_ context.Context, name string, data []byte, _ string) (string, int64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.m == nil {
		a.m = map[string][]byte{}
	}
	a.m[name] = append([]byte(nil), data...)
	return "sha-" + name, int64(len(data)), nil
}

func (a *memArtifacts) Get(_ context.Context, name string) ([]byte, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	b, ok := a.m[name]
	if !ok {
		return nil, fmt.Errorf("no artifact %q", name)
	}
	return b, nil
}

// newTC returns a tool context on a fresh real workspace.
func newTC(t *testing.T) *tool.Context {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &tool.Context{RunID: "run-1", MissionID: "mis-1", Workspace: ws, Network: sandbox.NetworkNone, Artifacts: &memArtifacts{}}
}

func js(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func run(t *testing.T, tl tool.Tool, tc *tool.Context, input any) tool.Result {
	t.Helper()
	var raw json.RawMessage
	if s, ok := input.(string); ok {
		raw = json.RawMessage(s)
	} else {
		raw = js(t, input)
	}
	res, err := tl.Run(context.Background(), tc, raw)
	if err != nil {
		t.Fatalf("%s: system error: %v", tl.Name(), err)
	}
	return res
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	// The test's own git runs no hook a test planted.
	cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=/dev/null"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}
