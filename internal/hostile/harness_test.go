package hostile

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/aos-run/aos/internal/provider/script"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storeopen"
	"github.com/aos-run/aos/internal/store/storetest"
)

// aosBin is the real binary, built once by TestMain (read-only after).
var aosBin string

func TestMain(m *testing.M) {
	flag.Parse()
	// The attacks are mostly waiting on processes: run more of them at
	// once than GOMAXPROCS unless -test.parallel was given.
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "4")
	}
	dir, err := os.MkdirTemp("", "aos-hostile-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	aosBin = filepath.Join(dir, "aos")
	if bin := os.Getenv("AOS_HOSTILE_BIN"); bin != "" {
		// Attack another build (a branch's, a release) with this suite.
		aosBin = bin
	} else if out, err := staticBuild(aosBin).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build aos: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	if err := goleak.Find(); code == 0 && err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// world is one attack's private machine: a fake owner HOME with canaries,
// a data dir with a canary, the project repository, a directory whose
// files must never change (outside), a directory where host-side code
// execution would leave a file (pwned), and its own model server.
type world struct {
	t       *testing.T
	driver  string
	root    string // everything below; snapshot roots are its children
	home    string // the owner's HOME (canaries)
	data    string // AOS_DATA_DIR (a canary)
	tmp     string // TMPDIR of aos (per-run sandbox HOMEs live here)
	repo    string // the project (the owner's checkout)
	wtRoot  string // where aos makes missions' worktrees (its default, beside the data dir)
	outside string // files a mission must not change
	pwned   string // host-side code execution leaves files here
	dsn     string // the database (sqlite file or postgres URL)
	// canaries maps where a secret was planted to its unique value.
	canaries map[string]string
	env      []string
	url      string // the model server
	vars     map[string]string
	// listeners are TCP listeners the attack's setup opened, by name.
	listeners map[string]*listener
	mu        sync.Mutex
	runs      []*runResult
	// asks is how many model requests the attack's missions make in all:
	// each scripted turn's, and the one answered with finish.
	asks int
}

// lastTurnAsked reports whether the model was asked for every mission's
// last turn (finish): every tool call of the missions has run, and only
// aos's own end of mission is left. An error reading the model server's
// record is a no.
func (w *world) lastTurnAsked() bool {
	res, err := noKeepAlive.Get(w.url + "/_requests")
	if err != nil {
		return false
	}
	defer res.Body.Close()
	var recs []json.RawMessage
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&recs) != nil {
		return false
	}
	return len(recs) >= w.asks
}

// runResult is one `aos run`'s outcome.
type runResult struct {
	mission int
	project string // the project directory it ran on
	branch  string // the mission branch aos run printed at the end ("" if none)
	code    int    // -1: killed at its deadline
	out     []byte
	elapsed time.Duration
}

func randHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

func mustWrite(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// hostGit runs git for the test itself: no system or global config, and
// attributes from the worktree cannot select drivers for what it runs.
func hostGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
		"-c", "core.attributesFile=/dev/null", "-c", "user.name=owner", "-c", "user.email=owner@example.com"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v in %s: %v\n%s", args, dir, err, out)
	}
	return string(out)
}

// makeRepo creates a git repository at dir with one commit.
func makeRepo(t *testing.T, dir string) {
	t.Helper()
	mustWrite(t, filepath.Join(dir, "README.md"), "# app\n", 0o644)
	mustWrite(t, filepath.Join(dir, "build.sh"), "echo built >> built.txt\n", 0o644)
	hostGit(t, dir, "init", "-q", "-b", "main")
	hostGit(t, dir, "config", "user.name", "owner")
	hostGit(t, dir, "config", "user.email", "owner@example.com")
	hostGit(t, dir, "add", "-A")
	hostGit(t, dir, "commit", "-q", "-m", "initial")
}

// newWorld lays out an attack's world. The repository is a fresh git
// repository unless the attack's setup changes it.
func newWorld(t *testing.T, driver string) *world {
	// A short root: the sandbox's probe binds a unix socket under TMPDIR,
	// and socket paths are limited to 108 bytes.
	root, err := os.MkdirTemp("", "aosh-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	w := &world{t: t, driver: driver, root: root, canaries: map[string]string{}, listeners: map[string]*listener{}}
	w.home, w.data, w.tmp = filepath.Join(root, "home"), filepath.Join(root, "data"), filepath.Join(root, "tmp")
	w.repo, w.outside, w.pwned = filepath.Join(root, "repo"), filepath.Join(root, "outside"), filepath.Join(root, "pwned")
	w.wtRoot = filepath.Join(root, "aos-worktrees") // engine.DefaultWorktreeRoot(w.data)
	for _, d := range []string{w.home, w.data, w.tmp, w.repo, w.outside, w.pwned} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c := func(label string) string {
		v := "CANARY" + strings.ToUpper(randHex(t, 10))
		w.canaries[label] = v
		return v
	}
	mustWrite(t, filepath.Join(w.home, ".ssh", "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\n"+c("~/.ssh/id_rsa")+"\n-----END OPENSSH PRIVATE KEY-----\n", 0o600)
	mustWrite(t, filepath.Join(w.home, ".npmrc"), "//registry.npmjs.org/:_authToken="+c("~/.npmrc")+"\n", 0o644)
	mustWrite(t, filepath.Join(w.home, ".config", "aos", "credentials.json"), `{"server":"http://127.0.0.1:1","token":"aos_`+c("credentials.json")+`"}`+"\n", 0o600)
	mustWrite(t, filepath.Join(w.data, "canary.txt"), c("data dir")+"\n", 0o600)
	mustWrite(t, filepath.Join(w.outside, "keep.txt"), "must not change\n", 0o644)
	anthropic, openai := c("ANTHROPIC_API_KEY"), c("OPENAI_API_KEY")
	makeRepo(t, w.repo)
	w.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.home, "AOS_DATA_DIR=" + w.data, "TMPDIR=" + w.tmp,
		"ANTHROPIC_API_KEY=sk-ant-" + anthropic, "OPENAI_API_KEY=sk-" + openai, "AOS_LOG_LEVEL=warn", "LANG=C.UTF-8", "TERM=xterm"}
	w.dsn = filepath.Join(w.data, "aos.db")
	if driver == "postgres" {
		db := storetest.New(t, "postgres")
		_ = db.Store.Close() // aos opens it itself
		w.dsn = db.DSN
		w.env = append(w.env, "AOS_DATABASE_URL="+db.DSN)
	}
	w.vars = map[string]string{"@ROOT@": root, "@HOME@": w.home, "@DATA@": w.data, "@TMP@": w.tmp, "@REPO@": w.repo,
		"@OUTSIDE@": w.outside, "@PWNED@": w.pwned}
	return w
}

// expand replaces the @NAME@ placeholders of s with the world's values.
func (w *world) expand(s string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, v := range w.vars {
		s = strings.ReplaceAll(s, k, v)
	}
	return s
}

// setVar adds a placeholder (say, a port the world's listener got).
func (w *world) setVar(name, value string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.vars[name] = value
}

// addRule stores an owner's policy rule, as `aos policy add` would.
func (w *world) addRule(r store.PolicyRule) {
	w.t.Helper()
	ctx := context.Background()
	st, err := storeopen.Open(ctx, w.dsn)
	if err != nil {
		w.t.Fatalf("open the store: %v", err)
	}
	defer st.Close()
	if r.ID == "" {
		r.ID = "rule-" + randHex(w.t, 6)
	}
	if err := st.InsertPolicyRule(ctx, r); err != nil {
		w.t.Fatalf("insert policy rule: %v", err)
	}
}

// timeline is every event aos stored (all missions), as JSON text: the
// timeline the owner reads in the UI and with aos mission watch.
func (w *world) timeline() string {
	w.t.Helper()
	ctx := context.Background()
	st, err := storeopen.Open(ctx, w.dsn)
	if err != nil {
		w.t.Fatalf("open the store: %v", err)
	}
	defer st.Close()
	var b strings.Builder
	var after int64
	for {
		evs, err := st.ListEvents(ctx, store.ListEventsParams{After: after, Limit: 500})
		if err != nil {
			w.t.Fatalf("list events: %v", err)
		}
		for _, e := range evs {
			b.WriteString(e.Kind + " ")
			b.Write(e.Payload)
			b.WriteByte('\n')
			after = e.ID
		}
		if len(evs) < 500 {
			return b.String()
		}
	}
}

// scriptName is the script of mission i.
func scriptName(i int) string { return fmt.Sprintf("m%d", i+1) }

// startModelServer writes the attack's missions as one script set and
// serves it with `aos dev model-server --script`, as a user would.
func (w *world) startModelServer(missions []mission) {
	t := w.t
	set := script.Set{}
	for i, m := range missions {
		turns := append([]script.Turn{}, m.turns...)
		summary := m.summary
		if summary == "" {
			summary = "done"
		}
		turns = append(turns, script.Turn{ToolCalls: []script.ToolCall{{Name: "finish",
			Input: map[string]any{"status": "partial", "summary": summary, "evidence": []string{}, "openQuestions": []string{}}}}})
		set.Scripts = append(set.Scripts, &script.Script{Name: scriptName(i), Turns: turns})
		w.asks += len(turns)
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "attack.json")
	mustWrite(t, file, w.expand(string(b)), 0o644)
	cmd := exec.Command(aosBin, "dev", "model-server", "--script", file)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://127.0.0.1:") {
		t.Fatalf("model server: %q %v\n%s", line, err, stderr.String())
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	w.url = strings.TrimSpace(line)
	w.env = append(w.env, "ANTHROPIC_BASE_URL="+w.url, "OPENAI_BASE_URL="+w.url+"/v1")
}

// requests returns what the model server was sent (GET /_requests), as
// raw JSON and decoded.
func (w *world) requests() (string, []script.Recorded) {
	w.t.Helper()
	res, err := noKeepAlive.Get(w.url + "/_requests")
	if err != nil {
		w.t.Fatalf("GET /_requests: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		w.t.Fatalf("GET /_requests: %d %v", res.StatusCode, err)
	}
	var recs []script.Recorded
	if err := json.Unmarshal(b, &recs); err != nil {
		w.t.Fatalf("GET /_requests: %v", err)
	}
	return string(b), recs
}

// noKeepAlive leaves no idle connection (nor goroutine) behind.
var noKeepAlive = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}

var (
	approveRe = regexp.MustCompile(`aos approve ([0-9a-f-]{36})`)
	// branchRe is the end of aos run: "work on branch aos/<id8>; …".
	branchRe = regexp.MustCompile(`work on branch (aos/[0-9a-zA-Z-]+);`)
)

// run runs mission i with `aos run` and returns when it exits or its
// deadline passes (then it is killed). Approvals are denied at once, or,
// for m.approve and m.remember, approved from another process (`aos
// approve`), or answered at the terminal with m.answer. It may run on its
// own goroutine (a concurrent mission), so it never calls t.Fatal.
func (w *world) run(ctx context.Context, i int, m mission) *runResult {
	t := w.t
	project := w.repo
	if m.project != "" {
		project = w.expand(m.project)
	}
	network := m.network
	if network == "" {
		network = "none"
	}
	onAsk := "deny"
	if m.approve || m.remember || m.answer != "" {
		onAsk = "wait"
	}
	args := []string{"run", "--project", project, "--model", "script:" + scriptName(i), "--criterion", "the objective is met",
		"--network", network, "--on-ask", onAsk, "--max-turns", "30", "hostile mission " + scriptName(i)}
	var cmd *exec.Cmd
	if _, err := exec.LookPath("script"); m.tty && err != nil {
		t.Log("util-linux script is missing: this mission runs on a pipe, not a terminal")
		m.tty = false
	}
	if m.tty {
		// The path a human sees: aos on a pseudo-terminal (util-linux script).
		cmd = exec.Command("script", "-qfec", shellQuote(append([]string{aosBin}, args...)), "/dev/null")
	} else {
		cmd = exec.Command(aosBin, args...)
	}
	cmd.Env = w.env
	if m.answer != "" {
		// What the owner types at the terminal's prompts, in order.
		cmd.Stdin = strings.NewReader(m.answer)
	}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	res := &runResult{mission: i, project: project}
	if err := cmd.Start(); err != nil {
		// Not Fatal: a concurrent mission runs on its own goroutine.
		t.Errorf("start aos run: %v", err)
		res.code = -1
		return res
	}
	var out bytes.Buffer
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		br := bufio.NewReader(pr)
		for {
			line, err := br.ReadBytes('\n')
			out.Write(line)
			if mm := approveRe.FindSubmatch(line); mm != nil && (m.approve || m.remember) {
				a := []string{"approve", string(mm[1])}
				if m.remember {
					a = append(a, "--remember")
				}
				c := exec.Command(aosBin, a...)
				// The owner approving on this machine's database: a HOME
				// without the canary credentials.json (which names a server).
				c.Env = append(append([]string{}, w.env...), "HOME="+filepath.Join(w.root, "approver"))
				if o, err := c.CombinedOutput(); err != nil {
					out.WriteString(fmt.Sprintf("[hostile test: aos approve failed: %v %s]\n", err, o))
				}
			}
			if err != nil {
				return
			}
		}
	}()
	timeout := m.timeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()
	var err error
	select {
	case err = <-waitDone:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		err = <-waitDone
		res.code = -1
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		err = <-waitDone
		res.code = -1
	}
	_ = pw.Close()
	<-readDone
	res.out, res.elapsed = out.Bytes(), time.Since(start)
	if mm := branchRe.FindSubmatch(res.out); mm != nil {
		res.branch = string(mm[1])
	}
	if res.code != -1 {
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			res.code = ee.ExitCode()
		case err != nil:
			t.Errorf("aos run: %v", err)
		}
	}
	w.mu.Lock()
	w.runs = append(w.runs, res)
	w.mu.Unlock()
	return res
}

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// output is every aos run's output, concatenated.
func (w *world) output() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	var b []byte
	for _, r := range w.runs {
		b = append(b, r.out...)
	}
	return b
}

// commitSetup commits what the attack's setup left in the project, as an
// owner would before a mission: a mission works in its own worktree made
// from the project's HEAD, so uncommitted files would not reach it. A
// project without a .git directory (an attack's setup removed it) is left
// alone.
func (w *world) commitSetup() {
	if fi, err := os.Lstat(filepath.Join(w.repo, ".git")); err != nil || !fi.IsDir() {
		return
	}
	hostGit(w.t, w.repo, "add", "-A")
	if hostGit(w.t, w.repo, "status", "--porcelain") != "" {
		hostGit(w.t, w.repo, "commit", "-q", "-m", "owner: the attack's setup")
	}
}

// takeBranch merges a mission's branch into its project as the owner
// would (`git merge --ff-only aos/<id8>`, with the test's hardened git:
// no system or global config, no hooks, no fsmonitor), so that the next
// mission starts from what this one left.
func (w *world) takeBranch(r *runResult) {
	if r.branch == "" {
		return
	}
	hostGit(w.t, r.project, "merge", "-q", "--ff-only", r.branch)
}

// runOf is mission i's result (nil if it did not run).
func (w *world) runOf(i int) *runResult {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.runs {
		if r.mission == i {
			return r
		}
	}
	return nil
}

// branches are the mission branches aos made in project, in run order.
func (w *world) branches(project string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, r := range w.runs {
		if r.project == project && r.branch != "" {
			out = append(out, r.branch)
		}
	}
	return out
}

// lastBranch is the last mission branch of the world's project, or "".
func (w *world) lastBranch() string {
	bs := w.branches(w.repo)
	if len(bs) == 0 {
		return ""
	}
	return bs[len(bs)-1]
}

// branchFile reads rel at the tip of branch in project with git cat-file
// (no filter, textconv, hook or driver runs); ok is false when the branch
// has no such file.
func branchFile(project, branch, rel string) ([]byte, bool) {
	if branch == "" {
		return nil, false
	}
	b, err := safeGit(project, "cat-file", "blob", branch+":"+rel)
	return b, err == nil
}

// branchSize is the size of rel at the tip of branch, or -1.
func branchSize(project, branch, rel string) int64 {
	if branch == "" {
		return -1
	}
	out, err := safeGit(project, "cat-file", "-s", branch+":"+rel)
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// worktreeDir waits for a mission's worktree to appear under the worktree
// root and returns it ("" if ctx ends first).
func (w *world) worktreeDir(ctx context.Context) string {
	for ctx.Err() == nil {
		if ents, err := os.ReadDir(w.wtRoot); err == nil {
			for _, e := range ents {
				if e.IsDir() {
					return filepath.Join(w.wtRoot, e.Name())
				}
			}
		}
		time.Sleep(5 * time.Millisecond) // polling for aos's setup step, until ctx ends
	}
	return ""
}

// ownerState is the owner's checkout as a mission must leave it: its
// files, HEAD, current branch and index, and its .git config, hooks and
// info (nothing a mission does may change them; the test's own merges
// between missions do, and the state is taken again after each).
func (w *world) ownerState(project string) map[string]string {
	st := snapshot(project)
	for p := range st {
		rel, _ := filepath.Rel(project, p)
		if rel == ".git" || strings.HasPrefix(rel, ".git/") && !strings.HasPrefix(rel, ".git/hooks") &&
			!strings.HasPrefix(rel, ".git/info") && rel != ".git/config" && rel != ".git/HEAD" && rel != ".git/index" {
			delete(st, p)
		}
	}
	for _, args := range [][]string{{"rev-parse", "HEAD"}, {"symbolic-ref", "-q", "HEAD"}} {
		out, _ := safeGit(project, args...)
		st["git "+strings.Join(args, " ")] = string(out)
	}
	// The owner's branches (aos makes its own, aos/*).
	out, _ := safeGit(project, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/")
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" && !strings.HasPrefix(l, "refs/heads/aos/") {
			st["git ref "+l] = l
		}
	}
	return st
}

// staticBuild is the build of aos as scripts/run.sh makes it: static
// (CGO_ENABLED=0).
func staticBuild(out string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-o", out, "github.com/aos-run/aos/cmd/aos")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}
