package backend

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/sandbox"
)

// CheckKey is the settings key under which an engine's last self-test
// (CheckRecord, JSON) is stored.
func CheckKey(engine string) string { return "engine_check:" + engine }

// CheckRecord is the outcome of an engine's self-test (seed 004): the
// engine changed a disposable worktree as asked while HEAD stayed at the
// base commit. BinarySHA256 pins the executable that passed: a changed
// binary must pass again before it is offered.
type CheckRecord struct {
	Engine       string   `json:"engine"`
	Passed       bool     `json:"passed"`
	Reason       string   `json:"reason,omitempty"`
	BinarySHA256 string   `json:"binarySha256,omitempty"`
	Files        []string `json:"files,omitempty"`
	Version      string   `json:"version,omitempty"`
	Spend        Spend    `json:"spend"`
	CheckedAt    int64    `json:"checkedAt"`
	DurationMS   int64    `json:"durationMs"`
}

// SelfTestFile is the file the self-test asks an engine to create.
const SelfTestFile = "AOS_SELFTEST.txt"

// SelfTest runs seed 004's self-test of an engine: in a disposable
// repository under tmpBase (outside aos's data dir), a linked worktree at
// a base commit; the engine is asked to create SelfTestFile with a random
// token and must do exactly that, report COMPLETED, and leave HEAD at the
// base. The engine runs as a mission's would, in the sandbox with no
// network and no model proxy.
func SelfTest(ctx context.Context, sb Runner, engine, tmpBase string, timeout time.Duration) (CheckRecord, error) {
	return SelfTestWith(ctx, sb, engine, tmpBase, timeout, SelfTestOptions{})
}

// SelfTestOptions give an adapter engine (claude) what it needs: a model
// proxy and the model to ask. The self-test's model calls are metered in
// the record, not charged to any mission.
type SelfTestOptions struct {
	Proxy *ProxyConfig
	Model string
	// Getenv is the CLI's environment (envFrom): it finds the installed
	// tool (AOS_CLAUDE_PATH…). Nil is an empty environment.
	Getenv func(string) string
	// Token is the text the engine must write; random when empty (a
	// scripted model in tests cannot guess a random one).
	Token string
}

// SelfTestWith is SelfTest with options for adapter engines.
func SelfTestWith(ctx context.Context, sb Runner, engine, tmpBase string, timeout time.Duration, o SelfTestOptions) (rec CheckRecord, err error) {
	start := time.Now()
	rec = CheckRecord{Engine: engine, CheckedAt: start.UnixMilli()}
	fail := func(format string, a ...any) (CheckRecord, error) {
		rec.Reason = fmt.Sprintf(format, a...)
		rec.DurationMS = time.Since(start).Milliseconds()
		return rec, nil
	}
	spec, err := ParseEngine(engine)
	if err != nil {
		return rec, err
	}
	binary := spec.Path
	switch spec.Kind {
	case "command":
	case "claude", "codex", "openclaw":
		getenv := o.Getenv
		if getenv == nil {
			getenv = func(string) string { return "" } // an empty environment
		}
		a := adapters[spec.Kind]
		if binary, err = a.toolPath(getenv); err != nil {
			return fail("%v", err)
		}
		if rec.Version, err = a.toolVersion(ctx, binary); err != nil {
			return fail("%v", err)
		}
		if o.Proxy == nil || o.Model == "" {
			return fail("engine %s needs a model (--model) and the model proxy for its self-test", spec.Kind)
		}
	default:
		return fail("engine %s has no adapter in this build", engine)
	}
	if rec.BinarySHA256, err = fileSHA256(binary); err != nil {
		return fail("engine %s: %v", engine, err)
	}
	dir, err := os.MkdirTemp(tmpBase, "aos-engine-check-")
	if err != nil {
		return rec, fmt.Errorf("backend: self-test dir: %w", err)
	}
	defer os.RemoveAll(dir)
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return rec, fmt.Errorf("backend: self-test dir: %w", err)
	}
	repo, wt := filepath.Join(dir, "repo"), filepath.Join(dir, "wt")
	if err := os.Mkdir(repo, 0o755); err != nil {
		return rec, fmt.Errorf("backend: self-test repo: %w", err)
	}
	if err := os.WriteFile(filepath.Join(repo, "README.md"), []byte("aos engine self-test\n"), 0o644); err != nil {
		return rec, fmt.Errorf("backend: self-test repo: %w", err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "README.md"}, {"commit", "-q", "-m", "base"}, {"worktree", "add", "-q", "-b", "aos/selftest", wt}} {
		if r, err := gitx.Run(ctx, gitx.Cmd{Dir: repo, Args: args, Env: gitx.DefaultIdentity}); err != nil || r.Code != 0 {
			return rec, fmt.Errorf("backend: self-test git %s: %v %s", args[0], err, clip(r.Combined, 200))
		}
	}
	gitDir, err := gitx.LinkedGitDir(wt)
	if err != nil {
		return rec, err
	}
	l, err := gitx.OpenLinked(ctx, wt, gitDir)
	if err != nil {
		return rec, err
	}
	base, err := git(ctx, l, gitx.Cmd{Args: []string{"rev-parse", "HEAD"}})
	if err != nil {
		return rec, err
	}
	base = strings.TrimSpace(base)
	nonce := make([]byte, 8)
	_, _ = rand.Read(nonce)
	token := hex.EncodeToString(nonce)
	if o.Token != "" {
		token = o.Token
	}
	home := filepath.Join(dir, "run")
	dirs := sandbox.RunPaths{Root: home, TmpDir: filepath.Join(home, "tmp"), Home: filepath.Join(home, "home")}
	for _, d := range []string{dirs.Root, dirs.TmpDir, dirs.Home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return rec, fmt.Errorf("backend: self-test dirs: %w", err)
		}
	}
	goal := fmt.Sprintf("Create the file %s at the top of the worktree containing exactly the line %s and change nothing else. Do not commit.", SelfTestFile, token)
	ln := launch{Argv: []string{binary}, Workspace: wt, Dirs: dirs, Network: sandbox.NetworkNone, Timeout: timeout,
		Request: RuntimeRequest{Schema: RequestSchema, MissionID: "selftest", Goal: goal, SuccessCriteria: []string{SelfTestFile + " contains " + token},
			Worktree: wt, BaseCommit: base, Branch: "aos/selftest", Network: "none", VerificationPolicy: "self-test: no verification is run"}}
	if a, ok := adapters[spec.Kind]; ok {
		led := &ledger{path: filepath.Join(dir, "model-calls.jsonl")}
		px, err := o.Proxy.start(ctx, limits{usd: 1, turns: 20}, led, nil, func() {})
		if err != nil {
			return rec, err
		}
		defer px.close()
		ln.Env, ln.Wrap, ln.ExtraFiles, ln.Request.ModelBaseURL = px.env(), px.wrap(), px.extraFiles(), px.engineURL()
		if err := a.launch(&ln, binary, o.Model); err != nil {
			return rec, err
		}
		defer func() { rec.Spend, _ = led.total() }()
	}
	eo, err := runEngine(ctx, sb, ln)
	if err != nil {
		return rec, err
	}
	if eo.Status != StatusCompleted {
		return fail("the engine did not complete: %s %s", eo.Status, eo.Summary)
	}
	in, err := Inspect(ctx, l, base, "aos/selftest")
	if err != nil {
		return rec, err
	}
	rec.Files = in.WriteSet
	switch {
	case in.Refusal != "":
		return fail("%s", in.Refusal)
	case len(in.Files) != 1 || in.Files[0].Path != SelfTestFile || in.Files[0].Op != "added":
		return fail("the engine changed %v, want only %s added", in.WriteSet, SelfTestFile)
	}
	wtDir, err := os.OpenRoot(wt)
	if err != nil {
		return rec, fmt.Errorf("backend: open the self-test worktree: %w", err)
	}
	defer wtDir.Close()
	b, err := readCapped(wtDir, SelfTestFile, 4096)
	if err != nil || strings.TrimSpace(string(b)) != token {
		return fail("%s does not hold the token", SelfTestFile)
	}
	rec.Passed = true
	rec.DurationMS = time.Since(start).Milliseconds()
	return rec, nil
}

// fileSHA256 hashes an executable.
func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", path)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Offered reports whether rec lets engine run missions now: it passed, and
// a command engine's executable is still the one that passed.
func Offered(engine string, rec CheckRecord, found bool) error {
	if !found || !rec.Passed {
		return fmt.Errorf("engine %s has not passed its self-test; run `aos engine check %s` first", engine, engine)
	}
	spec, err := ParseEngine(engine)
	if err != nil {
		return err
	}
	// An adapter's tool is pinned by its version in the record; a command
	// engine by its binary.
	if spec.Kind == "command" {
		sum, err := fileSHA256(spec.Path)
		if err != nil || sum != rec.BinarySHA256 {
			return fmt.Errorf("engine %s changed since it passed its self-test; run `aos engine check %s` again", engine, engine)
		}
	}
	return nil
}
