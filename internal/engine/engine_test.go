package engine_test

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

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/script"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/worker"
)

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "sandbox" && os.Args[2] == "probe-child" {
		os.Exit(sandbox.ProbeChildMain(os.Args[3:]))
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.InitArg { // the warm sandbox's init
		os.Exit(sandbox.InitMain(os.Args[2:]))
	}
	if role := os.Getenv("AOS_TEST_CHILD"); role != "" {
		os.Exit(runChild(role))
	}
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("database/sql.(*DB).connectionOpener"))
}

// env is one engine test: a database, a kernel, a scripted model server, a
// real sandbox and a real git workspace.
type env struct {
	t      testing.TB
	getenv func(string) string
	db     storetest.DB
	k      *kernel.Kernel
	srv    *script.Server
	set    *script.Set
	ws     string
	dir    string
}

func newEnv(t testing.TB, db storetest.DB, scriptYAML string) *env {
	t.Helper()
	dir := t.TempDir() // the data dir: the sandbox hides it from commands
	ws := filepath.Join(t.TempDir(), "repo")
	if err := demo.WriteRepo(ws); err != nil {
		t.Fatal(err)
	}
	k := kernel.New(db.Store, envOpts(dir))
	set := &script.Set{}
	if scriptYAML != "" {
		var err error
		if set, err = script.Parse([]byte(scriptYAML), "test"); err != nil {
			t.Fatal(err)
		}
	}
	return &env{t: t, db: db, k: k, srv: scripttest.Start(t, scriptYAML), set: set, ws: ws, dir: dir, getenv: fakeKeys}
}

// envOpts are the kernel options of an engine test.
func envOpts(dir string) kernel.Options {
	return kernel.Options{DataDir: dir, Lease: 5 * time.Second, Heartbeat: 500 * time.Millisecond,
		CancelPoll: 50 * time.Millisecond, Poll: 20 * time.Millisecond}
}

func (e *env) opts() kernel.Options { return envOpts(e.dir) }

// fakeKeys gives the SDKs a placeholder key; the scripted server ignores it.
func fakeKeys(k string) string {
	if k == "ANTHROPIC_API_KEY" || k == "OPENAI_API_KEY" {
		return "test-key-not-secret"
	}
	return ""
}

func (e *env) deps() engine.Deps {
	sb, err := sandbox.New(sandbox.Config{DataDir: e.dir})
	if err != nil {
		e.t.Fatal(err)
	}
	var models []provider.ModelInfo
	for _, sc := range e.set.Scripts {
		if sc.Price != nil {
			models = append(models, provider.ModelInfo{ID: provider.ScriptPrefix + sc.Name, Price: *sc.Price, Tools: true, Scripted: true})
		}
	}
	return worker.EngineDeps(e.k, e.dir, sb, worker.AdapterFunc(e.srv.URL(), e.getenv, models...))
}

func (e *env) start() func() {
	e.t.Helper()
	return startWith(e.t, e, e.deps())
}

// startWith runs a worker with the agent loop over deps until the test ends.
func startWith(t testing.TB, e *env, deps engine.Deps) func() {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = e.k.RunWorker(ctx, kernel.WorkerConfig{Concurrency: 2, Logics: map[string]kernel.Logic{engine.LogicName: engine.AgentLogic(deps)}, JanitorEvery: 50 * time.Millisecond})
	}()
	var once sync.Once
	stop := func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

func (e *env) mission(in engine.Input) string {
	e.t.Helper()
	return e.missionBudget(in, kernel.Budget{})
}

func (e *env) missionBudget(in engine.Input, b kernel.Budget) string {
	e.t.Helper()
	if in.Workspace == "" {
		in.Workspace = e.ws
	}
	if err := in.Validate(); err != nil {
		e.t.Fatal(err)
	}
	_, rid, err := e.k.CreateMission(context.Background(), kernel.MissionSpec{Title: "t", Logic: engine.LogicName, Input: in, Budget: b})
	if err != nil {
		e.t.Fatal(err)
	}
	return rid
}

func (e *env) wait(rid string, statuses ...string) store.Run {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		r, err := e.db.Store.GetRun(context.Background(), rid)
		if err == nil {
			for _, s := range statuses {
				if r.Status == s {
					return r
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	r, _ := e.db.Store.GetRun(context.Background(), rid)
	e.dumpSteps(rid)
	e.t.Fatalf("run %s is %s (%s %s), want %v; script server saw %d requests", rid, r.Status, r.Error, r.Result, statuses, len(e.srv.Requests()))
	return r
}

// dumpSteps logs the journal's tool results, for a failing test.
func (e *env) dumpSteps(rid string) {
	steps, _ := e.db.Store.ListSteps(context.Background(), rid, -1, 0)
	for _, s := range steps {
		if s.Kind == "tool_call" {
			e.t.Logf("step %d %s %s: %.300s", s.Seq, s.Name, s.Status, s.Result)
		}
	}
	evs, _ := e.db.Store.ListEvents(context.Background(), store.ListEventsParams{})
	for _, ev := range evs {
		if ev.Kind == "policy.decision" {
			e.t.Logf("event %s %.300s", ev.Kind, ev.Payload)
		}
	}
	if rs := e.srv.Requests(); len(rs) > 0 {
		b := string(rs[len(rs)-1].Body)
		if i := strings.LastIndex(b, "tool_result"); i >= 0 {
			e.t.Logf("last tool result: %.400s", b[i:])
		}
	}
}

func (e *env) pendingWait(rid string) store.Wait {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ws, _ := e.db.Store.ListWaits(context.Background(), store.ListWaitsParams{Status: "pending", RunID: rid})
		if len(ws) > 0 {
			return ws[0]
		}
		r, _ := e.db.Store.GetRun(context.Background(), rid)
		if kernel.IsTerminal(r.Status) {
			e.t.Fatalf("run ended %s (%s) instead of waiting", r.Status, r.Result)
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatal("no pending wait")
	return store.Wait{}
}

func (e *env) git(args ...string) string {
	out, err := exec.Command("git", append([]string{"-C", e.ws}, args...)...).CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// missionOf returns a run's mission id.
func (e *env) missionOf(rid string) string {
	e.t.Helper()
	r, err := e.db.Store.GetRun(context.Background(), rid)
	if err != nil {
		e.t.Fatal(err)
	}
	return r.MissionID
}

// branchOf is the mission branch of a run.
func (e *env) branchOf(rid string) string { return engine.Branch(e.missionOf(rid)) }

// branchTree extracts the tree of the run's mission branch into a new
// directory, as a reviewer would check it out.
func (e *env) branchTree(rid string) string {
	e.t.Helper()
	dir := e.t.TempDir()
	cmd := exec.Command("sh", "-c", `git -C "$1" archive "$2" | tar -x -C "$3"`, "sh", e.ws, e.branchOf(rid), dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("extract the mission branch: %v %s", err, out)
	}
	return dir
}

func outcome(t *testing.T, r store.Run) (kernel.Result, engine.Outcome) {
	t.Helper()
	var res kernel.Result
	var out engine.Outcome
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatalf("result %s: %v", r.Result, err)
	}
	_ = json.Unmarshal(res.Payload, &out)
	return res, out
}

func TestDemoMissionFixesTheBug(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		e := newEnv(t, db, string(demo.Script()))
		e.start()
		rid := e.mission(engine.Input{Objective: demo.Objective, Criteria: []string{demo.Criterion}, Model: demo.Model})
		r := e.wait(rid, kernel.StatusDone, kernel.StatusFailed, kernel.StatusBlocked, kernel.StatusPartial)
		res, out := outcome(t, r)
		if r.Status != kernel.StatusDone {
			e.dumpSteps(rid)
			t.Fatalf("status %s: %s", r.Status, res.Summary)
		}
		if len(out.Criteria) != 1 || !out.Criteria[0].Passes {
			t.Errorf("criteria = %+v", out.Criteria)
		}
		// The fix is real: the test passes on the mission branch, in a
		// commit with the mission trailer; the owner's checkout stays on
		// main, and the mission's worktree is gone.
		if outp, err := exec.Command("sh", "-c", "cd "+e.branchTree(rid)+" && sh test.sh").CombinedOutput(); err != nil {
			t.Fatalf("test still fails: %s", outp)
		}
		mid := r.MissionID
		if br := e.git("rev-parse", "--abbrev-ref", "HEAD"); br != "main" {
			t.Errorf("the owner's branch = %s, want main", br)
		}
		if out.Branch != "aos/"+mid[:8] || out.Base != e.git("rev-parse", "main") {
			t.Errorf("outcome names branch %q base %q", out.Branch, out.Base)
		}
		if wts := e.git("worktree", "list", "--porcelain"); strings.Count(wts, "worktree ") != 1 {
			t.Errorf("worktrees left after the mission:\n%s", wts)
		}
		if log := e.git("log", "-1", "--format=%s%n%b", "aos/"+mid[:8]); !strings.Contains(log, "Fix add()") {
			t.Errorf("last commit = %q", log)
		}
		if _, err := os.Stat(filepath.Join(os.TempDir(), "aos-run-"+rid)); !os.IsNotExist(err) {
			t.Errorf("the run's TMPDIR/HOME were not removed at its end: %v", err)
		}
		if e.git("rev-list", "--count", "main") != "1" {
			t.Errorf("main moved; the mission must work on its own branch")
		}
		// Parallel reads ran as two steps, allocated in call order.
		steps, _ := db.Store.ListSteps(context.Background(), rid, -1, 0)
		var reads []int
		for _, s := range steps {
			if s.Kind == "tool_call" && s.Name == "read_file" {
				reads = append(reads, s.Seq)
			}
		}
		if len(reads) != 2 || reads[1] != reads[0]+1 {
			t.Errorf("read_file steps at %v, want two consecutive", reads)
		}
	})
}

// runChild runs this test binary as an engine worker child (see
// child_test.go) on rid, with extra environment, and returns how it ended:
// nil, or the error of a child that failed or was killed (a kill hook).
func (e *env) runChild(t *testing.T, rid string, extra ...string) error {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "AOS_TEST_CHILD=engine", "AOS_TEST_DSN="+e.db.DSN, "AOS_TEST_DATA="+e.dir,
		"AOS_TEST_RUN="+rid, "AOS_TEST_MODEL_URL="+e.srv.URL()), extra...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("child did not finish")
		return nil
	}
}
