package main_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

// TestRunJSONLinesAndResumeByPrefix: aos run --json prints the mission id
// as its first line, the result envelope as its last; aos resume takes a
// unique prefix of the id, and an unknown one exits 4.
func TestRunJSONLinesAndResumeByPrefix(t *testing.T) {
	bin := buildAOS(t)
	srv := scripttest.Start(t, `name: quick
turns:
  - tool_calls: [{name: finish, input: {status: partial, summary: "quick", evidence: [], openQuestions: []}}]
`)
	repo := filepath.Join(t.TempDir(), "calc")
	if err := demo.WriteRepo(repo); err != nil {
		t.Fatal(err)
	}
	env := baseEnv(t, srv.URL())
	p := start(t, bin, env, "run", "--json", "--project", repo, "--model", "script:quick", "--criterion", "c", "--on-ask", "deny", "objective")
	var first struct {
		MissionID string `json:"missionId"`
	}
	select {
	case l := <-p.lines:
		if err := json.Unmarshal([]byte(l), &first); err != nil || len(first.MissionID) != 36 {
			t.Fatalf("first line = %q (%v), want {\"missionId\": …}", l, err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("aos run --json printed nothing")
	}
	if code := p.exit(t); code != 6 {
		t.Fatalf("aos run exit = %d, want 6 (partial)", code)
	}
	r := run(t, bin, env, "resume", "--json", first.MissionID[:8])
	lines := strings.Split(strings.TrimSpace(r.out), "\n") // stdout, then stderr's exit line
	var last struct {
		Status string `json:"status"`
	}
	if r.code != 6 || len(lines) < 2 || !strings.Contains(lines[0], first.MissionID) || json.Unmarshal([]byte(lines[1]), &last) != nil || last.Status != "partial" {
		t.Fatalf("aos resume <prefix> --json exited %d:\n%s", r.code, r.out)
	}
	for _, id := range []string{"ffffffff", "ffffffff-ffff-4fff-bfff-ffffffffffff"} {
		if r := run(t, bin, env, "resume", id); r.code != 4 || !strings.Contains(r.out, "no mission") {
			t.Errorf("aos resume %s exited %d, want 4:\n%s", id, r.code, r.out)
		}
	}
}

// TestResumeTakesOverAtOnceAfterKill: aos run is SIGKILLed while a shell
// command runs (its lease is live for 90 s); aos resume on the same machine
// takes over at once and asks about the interrupted command, showing it.
func TestResumeTakesOverAtOnceAfterKill(t *testing.T) {
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
	p := start(t, bin, env, "run", "--project", repo, "--model", "script:slow", "--criterion", "c", "objective")
	var seen strings.Builder
	mid := p.expect(t, missionRe, &seen)[1]
	p.expect(t, regexp.MustCompile(`→ shell`), &seen)
	_ = p.cmd.Process.Kill()
	p.exit(t)
	began := time.Now()
	q := start(t, bin, env, "resume", mid[:8])
	var out strings.Builder
	q.expect(t, regexp.MustCompile(`is gone; taking over its lease now`), &out)
	q.expect(t, regexp.MustCompile(`aos stopped while running step \d+: shell: sleep 8; echo slept >> log.txt`), &out)
	t.Logf("aos resume asked about the interrupted command %s after it started", time.Since(began).Round(time.Millisecond))
	if el := time.Since(began); el > 30*time.Second {
		t.Errorf("resume asked after %s; the dead process's 90 s lease must not be waited out", el)
	}
	_ = q.cmd.Process.Kill()
	q.exit(t)
}
