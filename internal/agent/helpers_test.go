package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/provider/script"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// finishScript ends a mission at its first turn.
const finishScript = `name: test
turns:
  - tool_calls:
      - {name: finish, input: {status: partial, summary: "did the task", evidence: [], openQuestions: []}}
`

type bundle struct {
	t      *testing.T
	db     storetest.DB
	k      *kernel.Kernel
	ms     *mission.Service
	svc    *agent.Service
	root   string // workspace root
	data   string // agent data dir
	pkgs   string // where fixture packages are written
	env    map[string]string
	model  *script.Server
	stop   context.CancelFunc
	gitEnv []string
	lease  time.Duration // the services' operation lease; 0 is agent.DefaultLease
}

type setupOpts struct {
	afterCreate func(string)
	noModel     bool
	gitEnv      []string
	// allowPrivateClones is the mission service's AllowPrivateClones
	// (AOS_CLONE_ALLOW_PRIVATE=1).
	allowPrivateClones bool
	// lease is the services' operation lease: agent.DefaultLease when 0.
	// A service recovers another's operation whose renewal is late by
	// 2/3 of it, as it should, so a test with two services at once keeps
	// the default; restartLease is for tests of a stop and a restart.
	lease time.Duration
}

// restartLease is a short operation lease for tests that stop a service
// with a job in flight and start another: the stopping one drains until
// a renewal tick (every lease/3) finds its jobs gone, and the new one
// recovers at its next tick what the old one released after its own
// start-up recovery. There a late renewal can only let the new service
// recover an operation of the stopped one, which it is right to do.
const restartLease = 900 * time.Millisecond

func setup(t *testing.T, db storetest.DB, o ...setupOpts) *bundle {
	t.Helper()
	var opts setupOpts
	if len(o) > 0 {
		opts = o[0]
	}
	b := &bundle{t: t, db: db, root: t.TempDir(), data: t.TempDir(), pkgs: t.TempDir(), lease: opts.lease}
	b.env = map[string]string{"ANTHROPIC_API_KEY": "sk-ant-canary-secret", "PATH": os.Getenv("PATH"), "HOME": t.TempDir()}
	if !opts.noModel {
		srv := scripttest.Start(t, finishScript)
		b.model = srv
		b.env["ANTHROPIC_BASE_URL"] = srv.URL()
	}
	b.k = kernel.New(db.Store, kernel.Options{DataDir: t.TempDir(), Poll: 20 * time.Millisecond, EventPoll: 20 * time.Millisecond})
	b.ms = mission.New(b.k, mission.Options{WorkspaceRoot: b.root, Getenv: func(k string) string { return b.env[k] }, ModelCheckTimeout: 5 * time.Second,
		AllowPrivateClones: opts.allowPrivateClones})
	model := "script:test"
	if _, err := b.ms.PutSettings(context.Background(), "cli:test", mission.Settings{DefaultModel: &model}); err != nil {
		t.Fatal(err)
	}
	b.gitEnv = opts.gitEnv
	b.start(opts.afterCreate)
	return b
}

// start makes a new service over the same database and data dir, as a
// restarted aos would.
func (b *bundle) start(afterCreate func(string)) {
	b.t.Helper()
	b.svc, b.stop = b.launch(b.db.Store, b.ms, afterCreate)
}

// launch starts an agent service over st and ms on b's workspace root and
// data dir, stopped when the test ends (or by the cancel it returns).
func (b *bundle) launch(st store.Store, ms agent.Missions, afterCreate func(string)) (*agent.Service, context.CancelFunc) {
	b.t.Helper()
	svc, err := agent.New(agent.Options{Store: st, Missions: ms, WorkspaceRoot: b.root, DataDir: b.data,
		Getenv: func(k string) string { return b.env[k] }, AfterCreate: afterCreate, GitEnv: b.gitEnv, SetupTimeout: 30 * time.Second, DoctorTimeout: 30 * time.Second, Lease: b.lease})
	if err != nil {
		b.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := svc.Start(ctx); err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() { cancel(); svc.Wait() })
	return svc, cancel
}

// fixture describes a community package written for a test. Setup and
// doctor are shell bodies; they may use $COUNT (a file to append to) and
// $FIFO (a named pipe the test writes to release them), which are
// substituted with absolute paths since scripts get a clean environment.
type fixture struct {
	id, setup, doctor, viewer string
	isViewer                  bool
	extra                     string // extra manifest JSON fields, with a leading comma
}

// pkg writes a fixture package and adds it; it returns its directory.
func (b *bundle) pkg(f fixture, review bool) string {
	b.t.Helper()
	dir := filepath.Join(b.pkgs, strings.ReplaceAll(f.id, "/", "_"))
	if err := os.MkdirAll(filepath.Join(dir, "template"), 0o755); err != nil {
		b.t.Fatal(err)
	}
	viewer := "null"
	if f.viewer != "" {
		viewer = `"` + f.viewer + `"`
	}
	m := fmt.Sprintf(`{"packageId":%q,"name":"Fixture %s","description":"A test package for %s","category":"test","engine":"builtin","viewerPackageId":%s,"version":"1.0","viewer":%v,"template":"template","instructions":"AGENTS.md","criteria":["the task is done"],"policy":{"network":"none","boundaries":"be careful"}`,
		f.id, f.id, f.id, viewer, f.isViewer)
	sub := strings.NewReplacer("$COUNT", b.count(f.id), "$FIFO", b.fifo(f.id))
	if f.setup != "" {
		m += `,"setup":"setup.sh"`
		write(b.t, filepath.Join(dir, "setup.sh"), sub.Replace(f.setup))
	}
	if f.doctor != "" {
		m += `,"doctor":"doctor.sh"`
		write(b.t, filepath.Join(dir, "doctor.sh"), sub.Replace(f.doctor))
	}
	write(b.t, filepath.Join(dir, "aos-package.json"), m+f.extra+"}")
	write(b.t, filepath.Join(dir, "AGENTS.md"), "# Fixture instructions for "+f.id+"\n")
	write(b.t, filepath.Join(dir, "template", "hello.txt"), "from the template\n")
	ctx := context.Background()
	if _, err := b.svc.AddPackage(ctx, dir); err != nil {
		b.t.Fatalf("add %s: %v", f.id, err)
	}
	if review {
		if _, err := b.svc.ReviewPackage(ctx, f.id); err != nil {
			b.t.Fatal(err)
		}
	}
	return dir
}

func (b *bundle) count(id string) string {
	return filepath.Join(b.pkgs, strings.ReplaceAll(id, "/", "_")+".count")
}

// fifo returns the package's named pipe, made on first use.
func (b *bundle) fifo(id string) string {
	p := filepath.Join(b.pkgs, strings.ReplaceAll(id, "/", "_")+".fifo")
	if _, err := os.Stat(p); err != nil {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			b.t.Fatal(err)
		}
	}
	return p
}

// release writes to a package's fifo once a script reads it, letting the
// scripts blocked on it go on (each `cat` reader sees the end of the file).
func (b *bundle) release(id string) {
	b.t.Helper()
	var err error
	waitFor(b.t, 30*time.Second, "a reader of "+id+"'s fifo", func() bool {
		var f *os.File
		if f, err = os.OpenFile(b.fifo(id), os.O_WRONLY|syscall.O_NONBLOCK, 0); err != nil {
			return false
		}
		_, _ = f.WriteString("go\n")
		_ = f.Close()
		return true
	}, func() string { return fmt.Sprint(err) })
}

// lines counts the lines of a package's count file.
func (b *bundle) lines(id string) int {
	data, err := os.ReadFile(b.count(id))
	if err != nil {
		return 0
	}
	return strings.Count(string(data), "\n")
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (b *bundle) prepare(identity, key, pkg string, ws agent.Workspace) (agent.PrepareResult, error) {
	return b.svc.Prepare(context.Background(), identity, agent.PrepareRequest{MachineID: b.svc.MachineID(), PackageID: pkg, IdempotencyKey: key, Workspace: ws})
}

func (b *bundle) mustPrepare(key, pkg string, ws agent.Workspace) agent.Operation {
	b.t.Helper()
	res, err := b.prepare(agent.OwnerIdentity, key, pkg, ws)
	if err != nil {
		b.t.Fatalf("prepare %s: %v", key, err)
	}
	if res.Status != agent.StatusAccepted || res.Operation.State != agent.StateAccepted || res.Operation.TaskDispatched || res.Operation.EngineAuthentication != "unknown" {
		b.t.Fatalf("prepare %s = %+v", key, res)
	}
	return res.Operation
}

func (b *bundle) op(id string) agent.Operation {
	b.t.Helper()
	o, err := b.svc.Operation(context.Background(), agent.OwnerIdentity, id)
	if err != nil {
		b.t.Fatal(err)
	}
	return o
}

// settled polls an operation until it is no longer accepted or running.
func (b *bundle) settled(id string) agent.Operation {
	b.t.Helper()
	var o agent.Operation
	waitFor(b.t, 60*time.Second, "operation "+id+" to settle", func() bool {
		o = b.op(id)
		return o.State != agent.StateAccepted && o.State != agent.StateRunning
	}, func() string { return js(o) })
	return o
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

func code(err error) string {
	var e *agent.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return "not an agent.Error: " + err.Error()
}

func waitFor(t *testing.T, d time.Duration, what string, cond func() bool, last func() string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last seen: %s", what, last())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var _ sync.Mutex

func gitInit(t *testing.T, dir string) {
	t.Helper()
	for _, args := range [][]string{{"init", "-q", "-b", "main", dir}, {"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
}
