package main_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

// TestRunNotClaimedByAPlainWorker: a mission of `aos run` is its process's
// alone. When aos run is killed mid-command while `aos worker` shares its
// data dir, the worker (which takes a dead holder's runs over within a
// second) leaves it alone: no reconcile question appears. `aos resume` then
// takes it over and asks, which is the positive control.
func TestRunNotClaimedByAPlainWorker(t *testing.T) {
	bin := buildAOS(t)
	srv := scripttest.Start(t, `name: slow
turns:
  - tool_calls: [{name: shell, input: {command: "sleep 8; echo slept >> log.txt", timeoutSec: 30}}]
  - tool_calls: [{name: finish, input: {status: partial, summary: "done", evidence: [], openQuestions: []}}]
`)
	repo := filepath.Join(t.TempDir(), "calc")
	if err := demo.WriteRepo(repo); err != nil {
		t.Fatal(err)
	}
	env := baseEnv(t, srv.URL())
	w := start(t, bin, append(env, "AOS_LOG_LEVEL=info"), "worker")
	var wout strings.Builder
	w.expect(t, regexp.MustCompile(`sandbox probe`), &wout)
	go func() {
		for range w.lines { // keep the worker's pipe drained
		}
	}()

	p := start(t, bin, env, "run", "--project", repo, "--model", "script:slow", "--criterion", "c", "objective")
	var seen strings.Builder
	mid := p.expect(t, missionRe, &seen)[1]
	p.expect(t, regexp.MustCompile(`→ shell`), &seen)
	_ = p.cmd.Process.Kill()
	p.exit(t)

	waits := func() string { return run(t, bin, env, "waits", "--json").out }
	// A worker allowed to claim it takes a dead holder's run over in about
	// a second and asks at once; give it several times that.
	for deadline := time.Now().Add(6 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if out := waits(); strings.Contains(out, mid) {
			t.Fatalf("the plain worker claimed aos run's mission and asked about it:\n%s", out)
		}
	}
	q := start(t, bin, env, "resume", mid)
	var out strings.Builder
	q.expect(t, regexp.MustCompile(`aos stopped while running step \d+: shell: sleep 8`), &out)
	if got := waits(); !strings.Contains(got, mid) {
		t.Fatalf("after aos resume asked, aos waits does not list the question:\n%s", got)
	}
}
