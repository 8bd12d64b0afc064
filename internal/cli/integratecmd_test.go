package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/worker"
)

// TestIntegrateCommand: aos integrate add/run/status over the data dir's
// change sets: two land in order (exit 0), a conflicting third blocks the
// queue (exit 7) with its file named and the target unmoved, skip lets the
// queue finish; the owner's checkout stays on main and clean.
func TestIntegrateCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{"AOS_DATA_DIR": filepath.Join(dir, "data"), "AOS_WORKSPACE_ROOT": filepath.Join(dir, "ws"), "HOME": dir}
	repo := filepath.Join(dir, "app")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-C", repo}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	run("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(repo, "a.txt"), []byte("one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run("add", ".")
	run("commit", "-qm", "base")
	base := run("rev-parse", "HEAD")
	run("branch", "aos/integration")

	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	st, err := worker.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	k := kernel.New(st, kernel.Options{DataDir: cfg.DataDir})
	changeSet := func(name, file, content string) string {
		run("checkout", "-q", "-b", "aos/"+name, base)
		if err := os.WriteFile(filepath.Join(repo, file), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		run("add", ".")
		run("commit", "-qm", name)
		commit := run("rev-parse", "HEAD")
		run("checkout", "-q", "main")
		body, _ := json.Marshal(map[string]any{"schema": "aos.change-set.v1", "missionId": name, "commit": commit, "baseCommit": base,
			"verification": []map[string]any{{"label": "t", "ran": true, "passed": true}}})
		sha, _, err := k.PutArtifact(context.Background(), bytes.NewReader(body), kernel.ArtifactMeta{Name: "change-set.json", StepSeq: -1})
		if err != nil {
			t.Fatal(err)
		}
		return sha
	}
	cs1, cs2, cs3 := changeSet("m1", "a.txt", "ONE\n"), changeSet("m2", "b.txt", "bee\n"), changeSet("m3", "a.txt", "uno\n")
	st.Close()

	e := &clientEnv{getenv: func(k string) string { return env[k] }}
	if out, errOut, code := runAOS(t.Context(), e, nil, "integrate", "add", "--repo", repo, cs1, cs2, cs3); code != 0 || !strings.Contains(out, "3  queued") {
		t.Fatalf("add: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code := runAOS(t.Context(), e, nil, "integrate", "run", "--repo", repo)
	if code != exitUnfinished || strings.Count(out, "integrated") < 2 || !strings.Contains(out, "blocked: conflict") ||
		!strings.Contains(out, "files: a.txt") || !strings.Contains(errOut, "blocked at item 3") {
		t.Fatalf("run: exit %d, want 7 with two integrated and a conflict on a.txt\n%s%s", code, out, errOut)
	}
	tip := run("rev-parse", "aos/integration")
	if run("show", tip+":a.txt") != "ONE" || run("show", tip+":b.txt") != "bee" || run("rev-parse", tip+"~2") != base {
		t.Errorf("target %s is not base → m1 → m2", tip)
	}
	if _, _, code := runAOS(t.Context(), e, nil, "integrate", "skip", "3", "--repo", repo); code != 0 {
		t.Errorf("skip: exit %d", code)
	}
	out, _, code = runAOS(t.Context(), e, nil, "integrate", "status", "--repo", repo, "--json")
	var q struct{ Items []struct{ State string } }
	if err := json.Unmarshal([]byte(out), &q); code != 0 || err != nil || len(q.Items) != 3 || q.Items[2].State != "skipped" {
		t.Errorf("status --json: exit %d %v\n%s", code, err, out)
	}
	if _, errOut, code := runAOS(t.Context(), e, nil, "integrate", "add", "--repo", repo, "--target", "main", cs1); code != exitUsage || !strings.Contains(errOut, "checked out") {
		t.Errorf("checked-out target: exit %d %s", code, errOut)
	}
	if head, st := run("symbolic-ref", "HEAD"), run("status", "--porcelain"); head != "refs/heads/main" || st != "" || run("rev-parse", "HEAD") != base {
		t.Errorf("owner's checkout changed: %s %q", head, st)
	}
}
