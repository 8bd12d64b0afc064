package main_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

// buildAOS builds the real binary once per test run.
func buildAOS(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "aos")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type result struct {
	code int
	out  string
}

func run(t *testing.T, bin string, env []string, args ...string) result {
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
	if out, err := exec.Command("sh", "-c", "cd "+repo+" && sh test.sh").CombinedOutput(); err != nil {
		t.Fatalf("the test still fails: %s", out)
	}
	branch, _ := exec.Command("git", "-C", repo, "rev-parse", "--abbrev-ref", "HEAD").Output()
	log, _ := exec.Command("git", "-C", repo, "log", "-1", "--format=%s").Output()
	if !strings.HasPrefix(string(branch), "aos/") || !strings.Contains(string(log), "Fix add()") {
		t.Fatalf("branch %q, last commit %q", branch, log)
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
	cmd := exec.Command(bin, "run", "--project", repo, "--model", "script:ask", "--criterion", "c", "--network", "open", "objective")
	cmd.Env = env
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	var mu sync.Mutex
	var out strings.Builder
	approveRe := regexp.MustCompile(`aos approve ([0-9a-f-]{36})`)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			mu.Lock()
			out.WriteString(sc.Text() + "\n")
			mu.Unlock()
			if m := approveRe.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	var waitID string
	select {
	case waitID = <-found:
	case <-time.After(60 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("aos run never printed the approve command:\n%s", out.String())
	}
	if r := run(t, bin, env, "approve", waitID); r.code != 0 {
		t.Fatalf("aos approve: %d %s", r.code, r.out)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("aos run exit = %v, want 2 (partial):\n%s", err, out.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("aos run did not finish after the approval")
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
	cmd := exec.Command(bin, "run", "--project", repo, "--model", "script:ask", "--criterion", "c", "--network", "open", "objective")
	cmd.Env = env
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	missionRe := regexp.MustCompile(`● mission ([0-9a-f-]{36})`)
	approveRe := regexp.MustCompile(`aos approve ([0-9a-f-]{36})`)
	ids := make(chan [2]string, 1)
	go func() {
		var mission string
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := missionRe.FindStringSubmatch(sc.Text()); m != nil {
				mission = m[1]
			}
			if m := approveRe.FindStringSubmatch(sc.Text()); m != nil {
				ids <- [2]string{mission, m[1]}
			}
		}
	}()
	var got [2]string
	select {
	case got = <-ids:
	case <-time.After(60 * time.Second):
		t.Fatal("no approval request")
	}
	_ = cmd.Process.Kill() // SIGKILL: no cleanup, the lease stays taken
	_ = cmd.Wait()
	pw.Close()
	if r := run(t, bin, env, "approve", got[1]); r.code != 0 {
		t.Fatalf("aos approve: %s", r.out)
	}
	r := run(t, bin, env, "resume", got[0])
	if r.code != 2 || !strings.Contains(r.out, "after-resume") {
		t.Fatalf("aos resume exited %d, want 2 (partial):\n%s", r.code, r.out)
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
			cmd := exec.Command(bin, "run", "--project", repo, "--model", "script:slow", "--criterion", "c", "objective")
			cmd.Env = env
			pr, pw := io.Pipe()
			cmd.Stdout, cmd.Stderr = pw, pw
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			lines := make(chan string, 100)
			go func() {
				sc := bufio.NewScanner(pr)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			var mission string
			missionRe := regexp.MustCompile(`● mission ([0-9a-f-]{36})`)
			deadline := time.After(60 * time.Second)
		wait:
			for {
				select {
				case l := <-lines:
					if m := missionRe.FindStringSubmatch(l); m != nil {
						mission = m[1]
					}
					if strings.Contains(l, "→ shell") {
						break wait
					}
				case <-deadline:
					t.Fatal("the shell step never started")
				}
			}
			for i := 0; i < tc.signals; i++ {
				_ = cmd.Process.Signal(os.Interrupt)
				if i == 0 && tc.signals > 1 {
					for l := range lines {
						if strings.Contains(l, "cancelling") {
							break
						}
					}
				}
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait(); pw.Close() }()
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 130 {
					t.Fatalf("exit = %v, want 130", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("aos run did not stop")
			}
			r := run(t, bin, env, "waits", "--json") // opens the same database
			if r.code != 0 {
				t.Fatalf("aos waits: %s", r.out)
			}
			_ = mission
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
