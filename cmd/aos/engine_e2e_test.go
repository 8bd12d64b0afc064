package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

// The external-engine path through the real binary: an engine is refused
// (exit 2) until `aos engine check` passed it; then `aos run --engine command:…`
// runs it in its own worktree, verifies and commits on aos/<id8> while the
// owner's checkout stays on main, untouched; an engine that keeps calling
// the model through the proxy is stopped at its turn budget (exit 7); the
// project's defaults.engine runs a mission that names no engine.
func TestRunExternalEngine(t *testing.T) {
	bin := buildAOS(t)
	eng := filepath.Join(t.TempDir(), "testengine")
	if out, err := exec.Command("go", "build", "-o", eng, "../../internal/backend/testdata/testengine").CombinedOutput(); err != nil {
		t.Fatalf("build test engine: %v\n%s", err, out)
	}
	srv := scripttest.Start(t, "scripts:\n  - name: spend\n    repeat: true\n    turns:\n      - text: ok\n")
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		out, err := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=o", "-c", "user.email=o@o"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	for n, b := range map[string]string{"check.sh": "test -f hello.txt\n", "old.txt": "old\n"} {
		if err := os.WriteFile(filepath.Join(repo, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", ".")
	git("commit", "-qm", "base")
	base := git("rev-parse", "HEAD")
	env := append(baseEnv(t, srv.URL()), "ANTHROPIC_API_KEY=sk-e2e-owner-key")
	engine := "command:" + eng
	args := []string{"run", "--project", repo, "--engine", engine, "--verify", "/bin/sh check.sh", "--verify-allow", "/bin/sh check.sh"}

	if r := run(t, bin, env, append(args, "say hello mode:edit")...); r.code != 2 || !strings.Contains(r.out, "aos engine check") {
		t.Fatalf("an unchecked engine ran (exit %d):\n%s", r.code, r.out)
	}
	if r := run(t, bin, env, "engine", "check", engine); r.code != 0 || !strings.Contains(r.out, "passed") {
		t.Fatalf("engine check exited %d:\n%s", r.code, r.out)
	}
	r := run(t, bin, env, append(args, "say hello mode:edit")...)
	if r.code != 0 {
		t.Fatalf("aos run exited %d:\n%s", r.code, r.out)
	}
	for _, want := range []string{"▶ engine " + engine, "✓? /bin/sh check.sh — exit 0", "▣ change set", "■ done"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("timeline lacks %q:\n%s", want, r.out)
		}
	}
	mid := missionRe.FindStringSubmatch(r.out)
	if mid == nil {
		t.Fatalf("no mission id:\n%s", r.out)
	}
	branch := "aos/" + mid[1][:8]
	if got := git("log", "-1", "--format=%B", branch); !strings.Contains(got, "Aos-Mission: "+mid[1]) || !strings.Contains(got, "Aos-Verified: /bin/sh check.sh") {
		t.Fatalf("commit message:\n%s", got)
	}
	if got := git("show", branch+":hello.txt"); got != "hello from the engine" {
		t.Fatalf("hello.txt on the branch: %q", got)
	}
	if git("rev-parse", "HEAD") != base || git("symbolic-ref", "--short", "HEAD") != "main" || git("status", "--porcelain") != "" {
		t.Fatal("the owner's checkout changed")
	}

	// The project's default engine (defaults.engine in .aos/config.yaml)
	// runs a mission that names none.
	cfg := filepath.Join(repo, ".aos", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("version: 1\ndefaults:\n  engine: "+engine+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, bin, env, "run", "--project", repo, "--verify", "/bin/sh check.sh", "--verify-allow", "/bin/sh check.sh", "again mode:edit")
	if r.code != 0 || !strings.Contains(r.out, "▶ engine "+engine) {
		t.Fatalf("the project's default engine did not run (exit %d):\n%s", r.code, r.out)
	}
	if err := os.RemoveAll(filepath.Dir(cfg)); err != nil {
		t.Fatal(err)
	}

	r = run(t, bin, env, append(args, "--model", "script:spend", "--max-turns", "3", "burn mode:spend")...)
	if r.code != 7 || !strings.Contains(r.out, "budget_exhausted") || !strings.Contains(r.out, "3 model calls") {
		t.Fatalf("over-budget engine: exit %d:\n%s", r.code, r.out)
	}
}
