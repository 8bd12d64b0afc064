package main_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestREADMEAsWritten follows README.md as a new user would: a fresh clone
// of this repository's committed HEAD in a temp dir, an empty HOME, a PATH
// without Go (the scripts must find /usr/local/go themselves), then the
// Quick start's main job (scripts/run.sh: the build and the demo) and the
// commands of "Without an API key", read from the README's code block and
// run as written: the scripted model server, aos up, aos setup, aos project
// add, aos mission create --watch. Each command's exit code and key output
// are checked.
//
// What it changes, and why: the addresses 127.0.0.1:8640 and :8641 become
// free ports (AOS_ADDR for aos up), since tests run side by side; aos setup
// gets --setup-token-stdin (which the README documents for scripts) and the
// test is the owner's authenticator app; ID is the id aos project add
// printed; and the Go build and module caches are this machine's (an empty
// HOME would download and compile every module: minutes, and the network).
// scripts/test.sh is only checked to be in the README: this test runs in
// it. A command in the block that this test does not know fails it: when
// the README changes, this test changes with it.
func TestREADMEAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the README test builds aos in a fresh clone")
	}
	if _, err := os.Stat("/usr/local/go/bin/go"); err != nil {
		t.Skip("the README's scripts expect Go at /usr/local/go/bin")
	}
	for _, tool := range []string{"git", "bwrap", "rg", "slirp4netns"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (scripts/run.sh would install it with apt)", tool)
		}
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not in a git checkout: nothing to clone")
	}
	clone := filepath.Join(t.TempDir(), "aos")
	if out, err := exec.Command("git", "clone", "-q", "--no-hardlinks", strings.TrimSpace(string(top)), clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	readme, err := os.ReadFile(filepath.Join(clone, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := shellBlocks(string(readme))
	if got, want := blocks["Quick start"], [][]string{{"scripts/run.sh"}, {"scripts/test.sh"}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("the Quick start's commands are %q, want %q: update this test with the README", got, want)
	}
	walk := blocks["Without an API key"]
	if len(walk) != 1 {
		t.Fatalf("want one code block under \"Without an API key\", got %q", walk)
	}

	home := t.TempDir()
	caches, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := strings.Fields(string(caches))
	modelAddr, serverAddr := freeAddr(t), freeAddr(t)
	env := []string{"HOME=" + home, "PATH=" + pathWithoutGo(), "GOCACHE=" + cache[0], "GOMODCACHE=" + cache[1], "AOS_ADDR=" + serverAddr,
		"AOS_LOG_LEVEL=warn"}

	// The main job: builds bin/aos and runs the demo.
	r := runBoundedIn(t, clone, env, 4*time.Minute, "scripts/run.sh")
	if r.code != 0 || !strings.Contains(r.out, "building bin/aos") || !strings.Contains(r.out, "■ done") || strings.Contains(r.out, "go: downloading") {
		t.Fatalf("scripts/run.sh: exit %d\n%s", r.code, r.out)
	}

	sub := strings.NewReplacer("127.0.0.1:8641", modelAddr, "127.0.0.1:8640", serverAddr)
	bin := filepath.Join(clone, "bin", "aos")
	var up *proc
	var upSeen strings.Builder
	var setupTok, projectID, metricsURL string
	for _, line := range walk[0] {
		args := shellWords(t, sub.Replace(line))
		background := args[len(args)-1] == "&"
		if background {
			args = args[:len(args)-1]
		}
		if args[0] == "export" && len(args) == 2 && strings.Contains(args[1], "=") {
			env = append(env, args[1])
			continue
		}
		if args[0] != "bin/aos" || len(args) < 2 {
			t.Fatalf("README line %q: this test only knows export and bin/aos; update it with the README", line)
		}
		for i, a := range args {
			if a == "ID" {
				args[i] = projectID
			}
		}
		cmd := strings.Join(args[1:min(3, len(args))], " ")
		switch {
		case cmd == "dev model-server" && background:
			p := startIn(t, clone, bin, env, args[1:]...)
			var seen strings.Builder
			p.expect(t, regexp.MustCompile(`^`+regexp.QuoteMeta("http://"+modelAddr)+`$`), &seen)
		case cmd == "up" && background:
			up = startIn(t, clone, bin, env, args[1:]...)
			root := up.expect(t, regexp.MustCompile(`projects live under (\S+)`), &upSeen)[1]
			if want := filepath.Join(home, ".local", "share", "aos-workspaces"); root != want {
				t.Errorf("workspace root %s, want %s", root, want)
			}
			if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
				t.Errorf("aos up did not create the workspace root: %v", err)
			}
			metricsURL = up.expect(t, regexp.MustCompile(`metrics at (http://\S+/metrics) `), &upSeen)[1]
			setupTok = up.expect(t, regexp.MustCompile(`setup token: (aos_setup_\S+)`), &upSeen)[1]
			waitHealthy(t, "http://"+serverAddr, &upSeen)
			if strings.Contains(upSeen.String(), "aos dev") {
				t.Errorf("aos up's banner says \"aos dev\":\n%s", upSeen.String())
			}
		case cmd == "setup --server" && len(args) == 4 && !background:
			if out := setupOwner(t, bin, env, args[3], setupTok); !strings.Contains(out, "owner account created") {
				t.Fatalf("aos setup:\n%s", out)
			}
		case cmd == "project add" && !background:
			r := runBoundedIn(t, clone, env, time.Minute, bin, args[1:]...)
			m := regexp.MustCompile(`project (prj_[0-9a-f]+) added`).FindStringSubmatch(r.out)
			if r.code != 0 || m == nil {
				t.Fatalf("%s: exit %d\n%s", line, r.code, r.out)
			}
			projectID = m[1]
		case cmd == "mission create" && !background && slices.Contains(args, "--watch"):
			r := runBoundedIn(t, clone, env, 2*time.Minute, bin, args[1:]...)
			if r.code != 0 || !strings.Contains(r.out, "■ done") || !strings.Contains(r.out, "hello from aos") {
				t.Fatalf("%s: exit %d, want 0 and the mission done:\n%s", line, r.code, r.out)
			}
		default:
			t.Fatalf("README line %q: this test does not know this command; update it with the README", line)
		}
	}
	if up == nil || projectID == "" {
		t.Fatalf("the walkthrough ran no aos up or no project add: %q", walk[0])
	}
	// The metrics URL aos up printed shows the mission it just ran.
	if metricsURL != "http://"+serverAddr+"/metrics" {
		t.Errorf("aos up printed metrics at %q, want http://%s/metrics", metricsURL, serverAddr)
	}
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatalf("GET %s: %v", metricsURL, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !regexp.MustCompile(`(?m)^aos_missions\{state="done"\} [1-9]`).Match(body) {
		t.Errorf("GET %s: %d, want the done mission in aos_missions:\n%s", metricsURL, resp.StatusCode, body)
	}
	log, err := exec.Command("git", "-C", filepath.Join(home, ".local", "share", "aos-workspaces", "hello"), "log", "--all", "--format=%s").CombinedOutput()
	if err != nil || !strings.Contains(string(log), "Add hello.txt") {
		t.Errorf("the mission's commit is not in the project: %v\n%s", err, log)
	}
	_ = up.cmd.Process.Signal(os.Interrupt)
	if code := up.exit(t); code != 0 {
		t.Errorf("aos up exit %d after Ctrl-C:\n%s", code, upSeen.String())
	}
}

// shellBlocks returns the lines of README's ```sh code blocks by the
// heading (## or ###) they are under, comments and blank lines left out.
func shellBlocks(readme string) map[string][][]string {
	out := map[string][][]string{}
	heading, in := "", false
	for _, l := range strings.Split(readme, "\n") {
		switch {
		case !in && strings.HasPrefix(l, "#"):
			heading = strings.TrimSpace(strings.TrimLeft(l, "#"))
		case !in && strings.TrimSpace(l) == "```sh":
			in = true
			out[heading] = append(out[heading], []string{})
		case in && strings.TrimSpace(l) == "```":
			in = false
		case in:
			if c := strings.Index(l, " #"); c >= 0 {
				l = l[:c]
			}
			if l = strings.TrimSpace(l); l != "" {
				b := out[heading]
				b[len(b)-1] = append(b[len(b)-1], l)
			}
		}
	}
	return out
}

// shellWords splits a README command line as the shell would for the
// commands it holds: words separated by spaces, "double quotes" grouping.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case strings.ContainsRune(`\$'`+"`", r):
			t.Fatalf("README line %q: this test does not expand %q; update it with the README", line, r)
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("README line %q: unbalanced quote", line)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// pathWithoutGo is this PATH without any directory that holds a go
// binary.
func pathWithoutGo() string {
	var keep []string
	for _, d := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(d, "go")); err == nil || d == "" {
			continue
		}
		keep = append(keep, d)
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// runBoundedIn runs name in dir and returns its exit code and output; it
// is killed (with its process group) after limit.
func runBoundedIn(t *testing.T, dir string, env []string, limit time.Duration, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s %q did not finish within %s:\n%s", name, args, limit, out)
	}
	var ee *exec.ExitError
	code := 0
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, string(out)}
}

// startIn runs bin with args in env and in dir ("" for this process's
// own), streaming its combined output. The README's commands run at the
// clone's top level (the model server's --script is relative to it).
func startIn(t *testing.T, dir, bin string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir, cmd.Env = dir, env
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, lines: make(chan string, 1000), done: make(chan error, 1), gone: make(chan struct{})}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	go func() { p.done <- cmd.Wait(); pw.Close(); close(p.gone) }()
	t.Cleanup(func() { endProc(p) })
	return p
}

// endProc ends p at a test's end: an interrupt first, so that a
// supervisor (aos up) stops and waits for its children before the test's
// temporary directories are removed (a child killed only by its parent's
// death signal could still be writing the data dir then); a kill after
// 15 s. It returns once p has been waited for.
func endProc(p *proc) {
	select {
	case <-p.gone:
		return
	default:
	}
	go func() {
		for range p.lines { // drain, so that it never blocks writing
		}
	}()
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.gone:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.gone
	}
}
