package stack

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/aos-run/aos/internal/demo"
)

// Options says what Start starts.
type Options struct {
	// Aos is the aos binary.
	Aos string
	// DB is "sqlite" or "postgres".
	DB string
	// PG is a PostgreSQL URL of a role that may CREATE DATABASE; Start
	// makes a fresh database there for DB "postgres".
	PG string
	// Script is the scripted model's script (YAML).
	Script string
	// Runs is the worker's AOS_MAX_CONCURRENT_RUNS; 0 starts no worker.
	Runs int
	// Keep leaves the data dir and the logs in place after Close.
	Keep bool
}

// Stack is a running aos: the scripted model server, aos server and,
// optionally, aos worker, on one data dir with a workspace root holding
// the demo repository as "repo".
type Stack struct {
	Root    string   // the scratch dir: data/, ws/, home/, the logs
	Env     []string // the environment every aos command of the stack gets
	DataDir string
	DBURL   string // the PostgreSQL database's URL, or ""
	Base    string // http://addr/api/v1
	Addr    string
	Token   string // an API token with read and write scope

	procs []*Proc
	drop  func()
	keep  bool
}

// Start starts a stack; Close stops it.
func Start(ctx context.Context, o Options) (_ *Stack, err error) {
	s := &Stack{keep: o.Keep}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if s.Root, err = os.MkdirTemp("", "aos-bench"); err != nil {
		return nil, err
	}
	wsRoot := filepath.Join(s.Root, "ws")
	if err := demo.WriteRepo(filepath.Join(wsRoot, "repo")); err != nil {
		return nil, err
	}
	scriptPath := filepath.Join(s.Root, "script.yaml")
	if err := os.WriteFile(scriptPath, []byte(o.Script), 0o600); err != nil {
		return nil, err
	}
	s.DataDir = filepath.Join(s.Root, "data")
	s.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Join(s.Root, "home"), "AOS_DATA_DIR=" + s.DataDir,
		"AOS_WORKSPACE_ROOT=" + wsRoot, "AOS_LOG_LEVEL=warn", "ANTHROPIC_API_KEY=sk-ant-bench-fake"}
	if t := os.Getenv("TMPDIR"); t != "" {
		s.Env = append(s.Env, "TMPDIR="+t)
	}
	if o.DB == "postgres" {
		if s.DBURL, s.drop, err = FreshDatabase(ctx, o.PG); err != nil {
			return nil, err
		}
		s.Env = append(s.Env, "AOS_DATABASE_URL="+s.DBURL)
	}
	model, out, err := StartProc(ctx, "model", o.Aos, s.Env, s.Root, "dev", "model-server", "--script", scriptPath)
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, model)
	modelURL, err := ReadLine(out, 20*time.Second)
	if err != nil {
		return nil, fmt.Errorf("model server: %w", err)
	}
	Drain(out, io.Discard)
	s.Env = append(s.Env, "ANTHROPIC_BASE_URL="+modelURL)
	tokCmd := exec.CommandContext(ctx, o.Aos, "token", "create", "--json", "--name", "bench")
	tokCmd.Env = s.Env
	tokOut, err := tokCmd.Output()
	if err != nil {
		return nil, fmt.Errorf("aos token create: %w", err)
	}
	var tok struct {
		Token string `json:"token"`
	}
	if err := json.Unmarshal(tokOut, &tok); err != nil || tok.Token == "" {
		return nil, fmt.Errorf("aos token create printed %q: %v", tokOut, err)
	}
	s.Token = tok.Token
	if s.Addr, err = FreeAddr(); err != nil {
		return nil, err
	}
	srv, out, err := StartProc(ctx, "server", o.Aos, append(s.Env, "AOS_ADDR="+s.Addr), s.Root, "server", "--no-setup-token")
	if err != nil {
		return nil, err
	}
	s.procs = append(s.procs, srv)
	Drain(out, io.Discard)
	s.Base = "http://" + s.Addr + "/api/v1"
	if err := WaitHTTP(s.Base+"/health", 30*time.Second); err != nil {
		return nil, err
	}
	if o.Runs > 0 {
		wk, out, err := StartProc(ctx, "worker", o.Aos, append(s.Env, fmt.Sprintf("AOS_MAX_CONCURRENT_RUNS=%d", o.Runs)), s.Root, "worker")
		if err != nil {
			return nil, err
		}
		s.procs = append(s.procs, wk)
		Drain(out, io.Discard)
	}
	return s, nil
}

// Pid returns the process id of the stack's "model", "server" or
// "worker", or 0.
func (s *Stack) Pid(name string) int {
	for _, p := range s.procs {
		if p.name == name {
			return p.cmd.Process.Pid
		}
	}
	return 0
}

// Close stops the processes (newest first), drops the PostgreSQL
// database and removes the scratch dir unless Keep.
func (s *Stack) Close() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		s.procs[i].Stop()
	}
	s.procs = nil
	if s.drop != nil {
		s.drop()
		s.drop = nil
	}
	if s.Root != "" && !s.keep {
		_ = os.RemoveAll(s.Root)
	}
}

// FreshDatabase creates an empty database on the cluster of pgURL and
// returns its URL and a function that drops it.
func FreshDatabase(ctx context.Context, pgURL string) (string, func(), error) {
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return "", nil, fmt.Errorf("connect to the PostgreSQL cluster: %w", err)
	}
	name := fmt.Sprintf("aos_bench_%d_%d", os.Getpid(), time.Now().UnixNano())
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		conn.Close(ctx)
		return "", nil, fmt.Errorf("create database: %w", err)
	}
	u, err := url.Parse(pgURL)
	if err != nil {
		conn.Close(ctx)
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		_, _ = conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		conn.Close(context.Background())
	}, nil
}

// BuildAOS builds ./cmd/aos of the module at root into dir.
func BuildAOS(root, dir string) (string, error) {
	bin := filepath.Join(dir, "aos")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/aos")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0") // static, as scripts/run.sh builds it
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build aos: %w", err)
	}
	return bin, nil
}

// RepoRoot is the module's root: the working directory or the nearest
// parent holding go.mod.
func RepoRoot() string {
	d, _ := os.Getwd()
	for p := d; p != "/"; p = filepath.Dir(p) {
		if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
			return p
		}
	}
	return d
}
