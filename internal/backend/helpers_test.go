package backend_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/testbin"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "sandbox" && os.Args[2] == "probe-child" {
		os.Exit(sandbox.ProbeChildMain(os.Args[3:]))
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.InitArg { // the warm sandbox's init
		os.Exit(sandbox.InitMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == backend.ForwarderArg {
		os.Exit(backend.ForwarderMain(os.Args[2:]))
	}
	if role := os.Getenv("AOS_TEST_CHILD"); role != "" {
		os.Exit(runChild(role))
	}
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"),
		goleak.Cleanup(func(code int) { engine.Remove(); os.Exit(code) }))
}

// engine is testdata/testengine, built once per test binary and removed
// when the tests end.
var engine = testbin.New("./testdata/testengine", "testengine", "aos-testengine-")

// testEngine builds testdata/testengine once per test binary.
func testEngine(t testing.TB) string {
	t.Helper()
	return engine.Path(t)
}

// env is one backend test: a database, a kernel, a real sandbox, a real
// repository with the mission's linked worktree.
type env struct {
	t       testing.TB
	db      storetest.DB
	k       *kernel.Kernel
	dataDir string
	repo    string
	wt      string
	base    string
	sb      *sandbox.Sandbox
	deps    backend.Deps
}

func newEnv(t testing.TB, db storetest.DB) *env {
	t.Helper()
	e := &env{t: t, db: db, dataDir: t.TempDir()}
	root := t.TempDir()
	e.repo = filepath.Join(root, "repo")
	e.wt = filepath.Join(root, "wt")
	if err := os.MkdirAll(e.repo, 0o755); err != nil {
		t.Fatal(err)
	}
	e.hostGit(e.repo, "init", "-q", "-b", "main")
	for name, body := range map[string]string{"README.md": "# demo\n", "old.txt": "old\n", "check.sh": "test -f hello.txt\n"} {
		if err := os.WriteFile(filepath.Join(e.repo, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e.hostGit(e.repo, "add", ".")
	e.hostGit(e.repo, "commit", "-q", "-m", "base")
	e.base = e.hostGit(e.repo, "rev-parse", "HEAD")
	e.k = kernel.New(db.Store, kernel.Options{DataDir: e.dataDir, Lease: 5 * time.Second, Heartbeat: 500 * time.Millisecond,
		CancelPoll: 50 * time.Millisecond, Poll: 20 * time.Millisecond})
	sb, err := sandbox.New(sandbox.Config{DataDir: e.dataDir})
	if err != nil {
		t.Fatal(err)
	}
	e.sb = sb
	e.deps = backend.Deps{Kernel: e.k, Sandbox: sb, DataDir: e.dataDir}
	return e
}

// hostGit runs git through gitx in dir, failing the test on an error.
func (e *env) hostGit(dir string, args ...string) string {
	e.t.Helper()
	r, err := gitx.Run(context.Background(), gitx.Cmd{Dir: dir, Args: args, Env: gitx.DefaultIdentity})
	if err != nil || r.Code != 0 {
		e.t.Fatalf("git %v: %v %s", args, err, r.Combined)
	}
	return strings.TrimSpace(r.Stdout)
}

// mission creates the mission, then its worktree at the base on
// aos/<id8> (as mission creation does), and returns the root run id.
func (e *env) mission(in backend.Input, b kernel.Budget) (missionID, runID string) {
	e.t.Helper()
	if in.Workspace == "" {
		in.Workspace = e.wt
	}
	if in.Objective == "" {
		in.Objective = "test"
	}
	if err := in.Validate(); err != nil {
		e.t.Fatal(err)
	}
	mid, rid, err := e.k.CreateMission(context.Background(), kernel.MissionSpec{Title: "t", Logic: backend.LogicName, Input: in, Budget: b})
	if err != nil {
		e.t.Fatal(err)
	}
	e.hostGit(e.repo, "worktree", "add", "-q", "-b", "aos/"+mid[:8], e.wt, e.base)
	return mid, rid
}

func (e *env) start() func() {
	e.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = e.k.RunWorker(ctx, kernel.WorkerConfig{Concurrency: 2, Logics: map[string]kernel.Logic{backend.LogicName: backend.Logic(e.deps)}, JanitorEvery: 50 * time.Millisecond})
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); wg.Wait() }) }
	e.t.Cleanup(stop)
	return stop
}

func (e *env) wait(rid string, statuses ...string) (store.Run, backend.Outcome) {
	e.t.Helper()
	return e.waitFor(90*time.Second, rid, statuses...)
}

// waitFor is wait with its own deadline (a slow real engine).
func (e *env) waitFor(d time.Duration, rid string, statuses ...string) (store.Run, backend.Outcome) {
	e.t.Helper()
	deadline := time.Now().Add(d)
	var r store.Run
	for time.Now().Before(deadline) {
		var err error
		r, err = e.db.Store.GetRun(context.Background(), rid)
		if err == nil {
			for _, s := range statuses {
				if r.Status == s {
					var res kernel.Result
					var out backend.Outcome
					_ = json.Unmarshal(r.Result, &res)
					_ = json.Unmarshal(res.Payload, &out)
					return r, out
				}
			}
			if kernel.IsTerminal(r.Status) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("run %s is %s (%s %s), want %v", rid, r.Status, r.Error, r.Result, statuses)
	return r, backend.Outcome{}
}

func (e *env) commandInput(mode string) backend.Input {
	return backend.Input{Objective: "do it mode:" + mode, Criteria: []string{"hello.txt exists"}, Engine: "command:" + testEngine(e.t),
		VerifyAllow: []string{"/bin/sh check.sh"}}
}

func runChild(role string) int {
	switch role {
	case "worker":
		return childWorker()
	}
	return 2
}

// engineBinary is the real CLI a test runs: the variable (AOS_TEST_CLAUDE,
// AOS_TEST_CODEX, AOS_TEST_OPENCLAW) set by scripts/engines-install.sh, or
// bin on PATH. Without one the test skips, or fails when CI requires the
// engines (AOS_TEST_REQUIRE_ENGINES=1).
func engineBinary(t *testing.T, variable, bin string) string {
	t.Helper()
	if p := os.Getenv(variable); p != "" {
		return p
	}
	if p, err := exec.LookPath(bin); err == nil {
		return p
	}
	msg := bin + " is not installed (scripts/engines-install.sh sets " + variable + ")"
	if os.Getenv("AOS_TEST_REQUIRE_ENGINES") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
