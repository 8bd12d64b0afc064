package main_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store/storeopen"
	"github.com/aos-run/aos/internal/testbin"
)

// aosProgram is the real binary, built once per test process (static,
// as scripts/run.sh builds it); TestMain removes it.
var aosProgram = testbin.New(".", "aos", "aos-cmd-e2e-")

func TestMain(m *testing.M) {
	code := m.Run()
	aosProgram.Remove()
	os.Exit(code)
}

// buildAOS returns the real binary, built once per test process.
func buildAOS(t testing.TB) string {
	t.Helper()
	return aosProgram.Path(t)
}

type result struct {
	code int
	out  string
}

func run(t testing.TB, bin string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, b.String()}
}

// proc is a running aos process whose output is read line by line.
type proc struct {
	cmd   *exec.Cmd
	lines chan string
	done  chan error
	gone  chan struct{} // closed once the process has been waited for
}

// start runs bin with args in env, streaming its combined output.
func start(t *testing.T, bin string, env []string, args ...string) *proc {
	t.Helper()
	return startIn(t, "", bin, env, args...)
}

// expect reads lines until re matches one, and returns its submatches.
func (p *proc) expect(t *testing.T, re *regexp.Regexp, seen *strings.Builder) []string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("output ended before %s:\n%s", re, seen.String())
			}
			seen.WriteString(l + "\n")
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-deadline:
			t.Fatalf("no line matched %s in 60 s:\n%s", re, seen.String())
		}
	}
}

// exit waits for the process and returns its exit code.
func (p *proc) exit(t *testing.T) int {
	t.Helper()
	go func() {
		for range p.lines { // drain, so the process never blocks writing
		}
	}()
	select {
	case err := <-p.done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(60 * time.Second):
		t.Fatal("aos did not exit")
		return -1
	}
}

var (
	missionRe = regexp.MustCompile(`● mission ([0-9a-f-]{36})`)
	approveRe = regexp.MustCompile(`aos approve ([0-9a-f-]{36})`)
)

// baseEnv is a clean environment: no provider keys, a fresh data dir.
func baseEnv(t *testing.T, modelURL string) []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + t.TempDir(), "ANTHROPIC_BASE_URL=" + modelURL}
}

// TestRunFixesTheBug runs `aos run` as a subprocess against a temp repo
// with a failing test, through the scripted model server.
func TestRunFixesTheBug(t *testing.T) {
	bin := buildAOS(t)
	srv := scripttest.Start(t, string(demo.Script()))
	repo := filepath.Join(t.TempDir(), "calc")
	if err := demo.WriteRepo(repo); err != nil {
		t.Fatal(err)
	}
	r := run(t, bin, baseEnv(t, srv.URL()), "run", "--project", repo, "--model", demo.Model, "--criterion", demo.Criterion, "--on-ask", "deny", demo.Objective)
	if r.code != 0 {
		t.Fatalf("aos run exited %d:\n%s", r.code, r.out)
	}
	// The work is on the mission's branch; the owner's checkout stays on
	// main, untouched.
	m := regexp.MustCompile(`work on branch (aos/[0-9a-f]{8})`).FindStringSubmatch(r.out)
	if m == nil {
		t.Fatalf("the timeline does not say where the work is:\n%s", r.out)
	}
	tree := t.TempDir()
	if out, err := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3" && cd "$3" && sh test.sh`, "sh", repo, m[1], tree).CombinedOutput(); err != nil {
		t.Fatalf("the test still fails on %s: %s", m[1], out)
	}
	branch, _ := exec.Command("git", "-C", repo, "rev-parse", "--abbrev-ref", "HEAD").Output()
	log, _ := exec.Command("git", "-C", repo, "log", "-1", "--format=%s", m[1]).Output()
	if strings.TrimSpace(string(branch)) != "main" || !strings.Contains(string(log), "Fix add()") {
		t.Fatalf("the owner's branch %q, last commit on %s %q", branch, m[1], log)
	}
	for _, want := range []string{"→ shell", "[exit code 0]", "■ done"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("timeline lacks %q:\n%s", want, r.out)
		}
	}
}

// TestRunWithoutTTYWaitsForApproval: an ask is a durable wait; aos run
// prints the command that resolves it and keeps waiting; another process
// approves it; the mission goes on.
func TestRunWithoutTTYWaitsForApproval(t *testing.T) {
	bin := buildAOS(t)
	srv := scripttest.Start(t, `name: ask
turns:
  - tool_calls: [{name: shell, input: {command: "echo approved-run", timeoutSec: 10}}]
  - expect: [{last_tool_result_contains: "approved-run"}]
    tool_calls: [{name: finish, input: {status: partial, summary: "ran after approval", evidence: [], openQuestions: []}}]
`)
	repo := filepath.Join(t.TempDir(), "calc")
	if err := demo.WriteRepo(repo); err != nil {
		t.Fatal(err)
	}
	env := baseEnv(t, srv.URL())
	p := start(t, bin, env, "run", "--project", repo, "--model", "script:ask", "--criterion", "c", "--network", "open", "objective")
	var seen strings.Builder
	waitID := p.expect(t, approveRe, &seen)[1]
	if r := run(t, bin, env, "approve", waitID); r.code != 0 {
		t.Fatalf("aos approve: %d %s", r.code, r.out)
	}
	if code := p.exit(t); code != 6 {
		t.Fatalf("aos run exit = %d, want 6 (partial):\n%s", code, seen.String())
	}
}

// TestDemo runs `aos demo`, the README's main job.
func TestDemo(t *testing.T) {
	bin := buildAOS(t)
	r := run(t, bin, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + t.TempDir()}, "demo", "--dir", t.TempDir())
	if r.code != 0 || !strings.Contains(r.out, "SCRIPTED") || !strings.Contains(r.out, "■ done") {
		t.Fatalf("aos demo exited %d:\n%s", r.code, r.out)
	}
}

// TestResumeAfterKill: aos run is SIGKILLed while its mission waits for an
// approval; the approval is given with no aos process running; aos resume
// finishes the mission.
func TestResumeAfterKill(t *testing.T) {
	bin := buildAOS(t)
	srv := scripttest.Start(t, `name: ask
turns:
  - tool_calls: [{name: shell, input: {command: "echo after-resume", timeoutSec: 10}}]
  - expect: [{last_tool_result_contains: "after-resume"}]
    tool_calls: [{name: finish, input: {status: partial, summary: "resumed", evidence: [], openQuestions: []}}]
`)
	repo := filepath.Join(t.TempDir(), "calc")
	if err := demo.WriteRepo(repo); err != nil {
		t.Fatal(err)
	}
	env := baseEnv(t, srv.URL())
	p := start(t, bin, env, "run", "--project", repo, "--model", "script:ask", "--criterion", "c", "--network", "open", "objective")
	var seen strings.Builder
	got := [2]string{p.expect(t, missionRe, &seen)[1], p.expect(t, approveRe, &seen)[1]}
	_ = p.cmd.Process.Kill() // SIGKILL: no cleanup
	p.exit(t)
	if r := run(t, bin, env, "approve", got[1]); r.code != 0 {
		t.Fatalf("aos approve: %s", r.out)
	}
	r := run(t, bin, env, "resume", got[0])
	if r.code != 6 || !strings.Contains(r.out, "after-resume") {
		t.Fatalf("aos resume exited %d, want 6 (partial):\n%s", r.code, r.out)
	}
}

// TestCtrlC: one SIGINT cancels the mission (exit 130, status cancelled); two
// leave it resumable (exit 130, not cancelled).
func TestCtrlC(t *testing.T) {
	bin := buildAOS(t)
	srv := scripttest.Start(t, `name: slow
turns:
  - tool_calls: [{name: shell, input: {command: "echo started; sleep 60", timeoutSec: 120}}]
`)
	for _, tc := range []struct {
		name    string
		signals int
		status  string
	}{{"once_cancels", 1, "cancelled"}, {"twice_leaves_resumable", 2, ""}} {
		t.Run(tc.name, func(t *testing.T) {
			repo := filepath.Join(t.TempDir(), "calc")
			if err := demo.WriteRepo(repo); err != nil {
				t.Fatal(err)
			}
			env := baseEnv(t, srv.URL())
			p := start(t, bin, env, "run", "--project", repo, "--model", "script:slow", "--criterion", "c", "objective")
			var seen strings.Builder
			mission := p.expect(t, missionRe, &seen)[1]
			p.expect(t, regexp.MustCompile(`→ shell`), &seen)
			_ = p.cmd.Process.Signal(os.Interrupt)
			if tc.signals > 1 {
				p.expect(t, regexp.MustCompile(`cancelling`), &seen)
				_ = p.cmd.Process.Signal(os.Interrupt)
			}
			if code := p.exit(t); code != 130 {
				t.Fatalf("exit = %d, want 130:\n%s", code, seen.String())
			}
			st, err := storeopen.Open(context.Background(), filepath.Join(strings.TrimPrefix(env[2], "AOS_DATA_DIR="), "aos.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			m, err := st.GetMission(context.Background(), mission)
			if err != nil {
				t.Fatal(err)
			}
			if tc.status != "" && m.Status != tc.status {
				t.Errorf("mission is %s, want %s", m.Status, tc.status)
			}
			if tc.status == "" && (m.Status == "cancelled" || m.Status == "done") {
				t.Errorf("mission is %s; two Ctrl-C must leave it resumable", m.Status)
			}
		})
	}
}

// TestDoctor: all checks pass on this machine, and a key is reported as
// present, never printed.
func TestDoctor(t *testing.T) {
	bin := buildAOS(t)
	secret := "sk-ant-doctor-secret-value"
	r := run(t, bin, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + t.TempDir(), "ANTHROPIC_API_KEY=" + secret}, "doctor")
	if r.code != 0 || !strings.Contains(r.out, "sandbox probe") || !strings.Contains(r.out, "ANTHROPIC_API_KEY      set") {
		t.Fatalf("aos doctor exited %d:\n%s", r.code, r.out)
	}
	if strings.Contains(r.out, secret) {
		t.Fatal("aos doctor printed the key")
	}
	// With bwrap hidden from PATH the probe fails closed, and doctor says so.
	r = run(t, bin, []string{"PATH=/nonexistent", "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + t.TempDir()}, "doctor")
	if r.code == 0 || !strings.Contains(r.out, "FAIL sandbox") {
		t.Fatalf("doctor without bwrap exited %d:\n%s", r.code, r.out)
	}
}

// TestUp: aos up runs the server and a worker as child processes (the
// health route answers; the worker's heartbeat row appears), restarts the
// worker when it is killed, and Ctrl-C stops everything.
func TestUp(t *testing.T) {
	bin := buildAOS(t)
	dataDir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + dataDir, "AOS_ADDR=" + addr}
	p := start(t, bin, env, "up")
	var seen strings.Builder
	p.expect(t, regexp.MustCompile(`up on `), &seen)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/api/v1/health")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), `"agent":"aos"`) {
				t.Fatalf("health = %d %s", resp.StatusCode, body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never answered: %v\n%s", err, seen.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	st, err := storeopen.Open(context.Background(), filepath.Join(dataDir, "aos.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	workers := func() []string {
		ws, _ := st.ListWorkers(context.Background())
		var ids []string
		for _, w := range ws {
			ids = append(ids, w.ID)
		}
		return ids
	}
	waitIDs := func(what string, ok func([]string) bool) []string {
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if ids := workers(); ok(ids) {
				return ids
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("timed out waiting for %s; workers: %v\n%s", what, workers(), seen.String())
		return nil
	}
	first := waitIDs("a worker", func(ids []string) bool { return len(ids) == 1 })
	var pid int
	if _, err := fmt.Sscanf(first[0][strings.LastIndex(first[0], "-")+1:], "%d", &pid); err != nil {
		t.Fatalf("worker id %q has no pid", first[0])
	}
	_ = syscall.Kill(pid, syscall.SIGKILL) // a crash: no cleanup
	p.expect(t, regexp.MustCompile(`worker exited .*restarting`), &seen)
	waitIDs("the restarted worker", func(ids []string) bool {
		for _, id := range ids {
			if id != first[0] {
				return true
			}
		}
		return false
	})
	_ = p.cmd.Process.Signal(os.Interrupt)
	if code := p.exit(t); code != 0 {
		t.Fatalf("aos up exit = %d:\n%s", code, seen.String())
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("the killed worker %d still exists", pid)
	}
}

// TestSettingsCommand: aos settings set writes only the flags given; a bad
// value is refused and changes nothing.
func TestSettingsCommand(t *testing.T) {
	bin := buildAOS(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + t.TempDir()}
	if r := run(t, bin, env, "settings", "set", "--daily-budget-usd", "3", "--default-model", "claude-haiku-5-5"); r.code != 0 {
		t.Fatalf("set: %d %s", r.code, r.out)
	}
	if r := run(t, bin, env, "settings", "set", "--daily-budget-usd", "2", "--default-effort", "extreme"); r.code == 0 {
		t.Fatalf("a bad effort was accepted: %s", r.out)
	}
	r := run(t, bin, env, "settings", "--json")
	if r.code != 0 || !strings.Contains(r.out, `"dailyBudgetUsd": 3`) || !strings.Contains(r.out, `"defaultModel": "claude-haiku-5-5"`) {
		t.Fatalf("settings after a refused change:\n%s", r.out)
	}
	r = run(t, bin, env, "settings")
	if r.code != 0 || !strings.Contains(r.out, "daily budget:      $3.00") || !strings.Contains(r.out, "default model:     claude-haiku-5-5") ||
		!strings.Contains(r.out, "default effort:    not set") || strings.Contains(r.out, "{") {
		t.Fatalf("human settings:\n%s", r.out)
	}
}
