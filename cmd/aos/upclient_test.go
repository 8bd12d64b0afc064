package main_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store/storetest"
)

// setupOwner runs `aos setup --setup-token-stdin` as the owner would from
// a terminal session piped through: the setup token, the password twice,
// then the TOTP code of the secret it prints.
func setupOwner(t *testing.T, bin string, env []string, server, setupTok string) string {
	t.Helper()
	cmd := exec.Command(bin, "setup", "--server", server, "--setup-token-stdin")
	cmd.Env = env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	const password = "a long owner passphrase"
	if _, err := io.WriteString(stdin, setupTok+"\n"+password+"\n"+password+"\n"); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait(); pw.Close() }()
	secretRe := regexp.MustCompile(`secret: ([A-Z2-7]+)`)
	deadline := time.After(60 * time.Second)
	for sent := false; ; {
		select {
		case l, ok := <-lines:
			if !ok {
				if err := <-done; err != nil {
					t.Fatalf("aos setup: %v\n%s", err, out.String())
				}
				return out.String()
			}
			out.WriteString(l + "\n")
			if m := secretRe.FindStringSubmatch(l); m != nil && !sent {
				if _, err := io.WriteString(stdin, totp(t, m[1], time.Now())+"\n"); err != nil {
					t.Fatal(err)
				}
				sent = true
			}
		case <-deadline:
			t.Fatalf("aos setup did not finish:\n%s", out.String())
		}
	}
}

// TestUpClientFlow is the README's server path with nothing but the aos
// binary, on both drivers: `aos up`; `aos setup` with the printed setup
// token; `aos project add`; `aos mission create --watch` against a
// scripted model; the watch prints the approval command, another process
// runs it; the watch follows the mission to its end and exits with the
// mission's outcome (6: partial).
func TestUpClientFlow(t *testing.T) {
	bin := buildAOS(t)
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			srv := scripttest.Start(t, upFlowScript)
			root := t.TempDir()
			addr := freeAddr(t)
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "XDG_CONFIG_HOME=" + t.TempDir(), "AOS_DATA_DIR=" + t.TempDir(),
				"AOS_ADDR=" + addr, "AOS_WORKSPACE_ROOT=" + root, "ANTHROPIC_BASE_URL=" + srv.URL(), "AOS_LOG_LEVEL=warn"}
			if driver == "postgres" {
				db := storetest.New(t, "postgres")
				_ = db.Store.Close()
				env = append(env, "AOS_DATABASE_URL="+db.DSN)
			}
			up := start(t, bin, env, "up")
			var seen strings.Builder
			setupTok := up.expect(t, regexp.MustCompile(`setup token: (aos_setup_\S+)`), &seen)[1]
			server := "http://" + addr
			waitHealthy(t, server, &seen)

			if out := setupOwner(t, bin, env, server, setupTok); !strings.Contains(out, "owner account created") {
				t.Fatalf("aos setup:\n%s", out)
			}
			if err := demo.WriteRepo(filepath.Join(root, "calc")); err != nil {
				t.Fatal(err)
			}
			r := run(t, bin, env, "project", "add", "calc", "--name", "calc")
			id := regexp.MustCompile(`project (prj_[0-9a-f]+) added`).FindStringSubmatch(r.out)
			if r.code != 0 || id == nil {
				t.Fatalf("aos project add: %d\n%s", r.code, r.out)
			}
			watch := start(t, bin, env, "mission", "create", "say hello", "--criteria", "it says hello", "--project", id[1],
				"--model", "script:upflow", "--network", "open", "--budget-usd", "0.1", "--max-turns", "10", "--watch")
			var timeline strings.Builder
			waitID := watch.expect(t, regexp.MustCompile(`aos approve (\S+)`), &timeline)[1]
			if r := run(t, bin, env, "approve", waitID); r.code != 0 {
				t.Fatalf("aos approve: %d\n%s", r.code, r.out)
			}
			watch.expect(t, regexp.MustCompile(`\[exit code 0\]`), &timeline) // the approved command ran
			code := watch.exit(t)
			if code != 6 {
				t.Fatalf("aos mission create --watch exit = %d, want 6 (partial):\n%s", code, timeline.String())
			}
			if r := run(t, bin, env, "waits"); r.code != 0 || strings.Contains(r.out, waitID) {
				t.Fatalf("aos waits after the approval: %d\n%s", r.code, r.out)
			}
			_ = up.cmd.Process.Signal(os.Interrupt)
			if code := up.exit(t); code != 0 {
				t.Fatalf("aos up exit = %d:\n%s", code, seen.String())
			}
		})
	}
}
