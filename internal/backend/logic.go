package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/policy"
	"github.com/aos-run/aos/internal/sandbox"
)

// Deps are what external-engine missions need from the process around them.
type Deps struct {
	// Kernel stores change-set records as artifacts.
	Kernel *kernel.Kernel
	// Sandbox runs the engine and the verification commands.
	Sandbox Runner
	// DataDir holds the model-call ledgers (backend/<run>/); the sandbox
	// hides it.
	DataDir string
	// RunDirBase holds each run's private TMPDIR and HOME (aos-run-<id>).
	RunDirBase string
	// Rules returns the owner's policy rules for a project (and global).
	Rules func(ctx context.Context, projectID string) ([]policy.Rule, error)
	// Proxy, when set, serves the engine's model calls through a metering
	// proxy; nil gives the engine no model access.
	Proxy *ProxyConfig
	// WorktreeRoot holds the worktrees this logic makes for missions whose
	// workspace is the project itself; DefaultWorktreeRoot when empty.
	WorktreeRoot string
	// Getenv is the worker's environment, read at its edge (the CLI's
	// envFrom, worker.Config.Getenv): it finds installed tools
	// (AOS_CLAUDE_PATH). Nil is an empty environment.
	Getenv func(string) string
	// Hide are directories the engine and the verification commands see
	// empty (the workspace root: other projects), besides the worktree
	// root (other missions' worktrees) and the sandbox's own hidden dirs;
	// the mission's worktree is mounted back, and its project's git dir
	// shown read-only.
	Hide []string
}

func (d Deps) getenv(k string) string {
	if d.Getenv != nil {
		return d.Getenv(k)
	}
	return ""
}

const defaultEngineTimeout = time.Hour

// Logic returns the external-engine mission as a kernel logic.
func Logic(d Deps) kernel.Logic {
	return func(rc kernel.RunContext) (kernel.Result, error) {
		in, err := decodeInput(rc.Input())
		if err != nil {
			return kernel.Result{Status: kernel.StatusFailed, Summary: err.Error()}, nil
		}
		eng, _ := ParseEngine(in.Engine)
		m := &mission{d: d, rc: rc, in: in, eng: eng, branch: in.branch(rc.MissionID())}
		return m.run()
	}
}

// mission is one execution of the logic; all of it is rebuilt on replay.
type mission struct {
	d      Deps
	rc     kernel.RunContext
	in     Input
	eng    EngineSpec
	branch string
	setup  setupResult
}

type setupResult struct {
	GitDir  string   `json:"gitDir"`
	Base    string   `json:"base"`
	Argv    []string `json:"argv"`
	Refusal string   `json:"refusal,omitempty"`
}

// Outcome is the payload of the run's result envelope.
type Outcome struct {
	Engine       string         `json:"engine"`
	Summary      string         `json:"summary"`
	EngineResult EngineOutcome  `json:"engineResult"`
	Inspection   *Inspection    `json:"inspection,omitempty"`
	Verification []VerifyResult `json:"verification,omitempty"`
	Criteria     []Criterion    `json:"criteria"`
	Commit       string         `json:"commit,omitempty"`
	Branch       string         `json:"branch"`
	ChangeSet    string         `json:"changeSet,omitempty"`
	Spend        Spend          `json:"spend"`
}

// Criterion is a done criterion with the evidence aos gathered itself.
type Criterion struct {
	ID       string `json:"id"`
	Text     string `json:"text"`
	Passes   bool   `json:"passes"`
	Evidence string `json:"evidence,omitempty"`
}

func (m *mission) run() (kernel.Result, error) {
	if isProject(m.in.Workspace) {
		// The mission names the project: it works in a worktree of its
		// own, made here (a mission created with a worktree skips this).
		project := m.in.Workspace
		wt, err := m.addWorktree()
		if err != nil {
			return kernel.Result{}, err
		}
		m.in.Workspace, m.in.Base = wt.Path, wt.Base
		res, err := m.runInWorktree()
		if err == nil && res.Status == kernel.StatusDone {
			err = m.removeWorktree(project, wt.Path)
		}
		return res, err
	}
	return m.runInWorktree()
}

func (m *mission) runInWorktree() (kernel.Result, error) {
	if err := m.doSetup(); err != nil {
		return kernel.Result{}, err
	}
	out := Outcome{Engine: m.eng.Name(), Branch: m.branch, Criteria: []Criterion{}}
	if m.setup.Refusal != "" {
		return m.end(kernel.StatusBlocked, "The mission's worktree cannot be used: "+m.setup.Refusal, out)
	}
	if err := m.rc.Emit("engine.started", map[string]any{"engine": m.eng.Name(), "base": m.setup.Base, "branch": m.branch}); err != nil {
		return kernel.Result{}, err
	}
	eo, err := m.engineStep()
	if err != nil {
		return kernel.Result{}, err
	}
	if eo.Status == OutcomeInterrupted {
		if eo.Spend, err = m.chargeInterrupted(); err != nil {
			return kernel.Result{}, err
		}
	}
	out.EngineResult, out.Spend = eo, eo.Spend
	if err := m.rc.Emit("engine.finished", map[string]any{"engine": m.eng.Name(), "status": eo.Status, "summary": eo.Summary,
		"exitCode": eo.ExitCode, "spend": eo.Spend, "killed": eo.Killed, "malformed": eo.Malformed}); err != nil {
		return kernel.Result{}, err
	}
	switch eo.Status {
	case OutcomeMalformed:
		return m.end(kernel.StatusFailed, "The engine's runtime result was malformed: "+eo.Malformed, out)
	case OutcomeKilled:
		if eo.Killed == "budget" {
			return m.end(kernel.StatusBudgetExhausted, "The engine was stopped: "+eo.Summary, out)
		}
		return m.end(kernel.StatusFailed, "The engine was stopped: "+eo.Summary, out)
	case StatusFailed:
		return m.end(kernel.StatusFailed, "The engine reported FAILED: "+eo.Summary, out)
	case StatusBlocked:
		return m.end(kernel.StatusBlocked, "The engine reported BLOCKED: "+eo.Summary, out)
	}
	insp, err := m.inspectStep()
	if err != nil {
		return kernel.Result{}, err
	}
	out.Inspection = &insp
	if insp.Refusal != "" {
		if err := m.rc.Emit("verify.refused", map[string]any{"reason": insp.Refusal, "findings": insp.Findings, "commits": insp.Commits}); err != nil {
			return kernel.Result{}, err
		}
		if err := m.recordChangeSet(&out); err != nil {
			return kernel.Result{}, err
		}
		return m.end(kernel.StatusBlocked, "aos refused the engine's change: "+insp.Refusal, out)
	}
	if out.Verification, err = m.verify(eo.Verification); err != nil {
		return kernel.Result{}, err
	}
	passed, why := verdict(out.Verification)
	out.Criteria = m.criteria(out.Verification, passed)
	if eo.Status == StatusCompleted && passed && len(insp.Files) > 0 {
		if out.Commit, err = m.commitStep(out.Verification); err != nil {
			return kernel.Result{}, err
		}
	}
	if err := m.recordChangeSet(&out); err != nil {
		return kernel.Result{}, err
	}
	switch {
	case eo.Status == StatusCompleted && passed && len(insp.Files) == 0:
		return m.end(kernel.StatusPartial, "The engine reported COMPLETED but changed nothing; verification passed.", out)
	case eo.Status == StatusCompleted && passed:
		return m.end(kernel.StatusDone, fmt.Sprintf("Verified and committed %s on %s: %s", short(out.Commit), m.branch, eo.Summary), out)
	case eo.Status == OutcomeInterrupted && passed:
		return m.end(kernel.StatusPartial, "The interrupted engine's partial changes pass verification but were not committed: the engine never reported COMPLETED.", out)
	}
	return m.end(kernel.StatusPartial, "Not committed: "+why, out)
}

// doSetup journals the worktree's admin dir and base before the engine
// can touch the worktree.
func (m *mission) doSetup() error {
	res, err := m.rc.Step(kernel.StepSpec{Kind: "backend", Name: "setup", Effect: kernel.EffectRead,
		Request: map[string]any{"workspace": m.in.Workspace, "engine": m.eng.Name(), "base": m.in.Base, "gitDir": m.in.GitDir}},
		func(ctx context.Context, _ string) (kernel.Outcome, error) {
			return kernel.Outcome{Result: m.resolveSetup(ctx)}, nil
		})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res, &m.setup); err != nil {
		return fmt.Errorf("backend: decode setup: %w", err)
	}
	return nil
}

func (m *mission) resolveSetup(ctx context.Context) setupResult {
	refuse := func(err error) setupResult { return setupResult{Refusal: err.Error()} }
	gitDir := m.in.GitDir
	if gitDir == "" {
		var err error
		if gitDir, err = gitx.LinkedGitDir(m.in.Workspace); err != nil {
			return refuse(err)
		}
	}
	l, err := gitx.OpenLinked(ctx, m.in.Workspace, gitDir)
	if err != nil {
		return refuse(err)
	}
	head, err := git(ctx, l, gitx.Cmd{Args: []string{"rev-parse", "--verify", "HEAD^{commit}"}})
	if err != nil {
		return refuse(err)
	}
	base := m.in.Base
	if base == "" {
		base = strings.TrimSpace(head)
	}
	if strings.TrimSpace(head) != base {
		return setupResult{Refusal: fmt.Sprintf("the worktree's HEAD %s is not the base %s", short(strings.TrimSpace(head)), short(base))}
	}
	argv, err := m.engineArgv()
	if err != nil {
		return refuse(err)
	}
	return setupResult{GitDir: l.GitDir(), Base: base, Argv: argv}
}

func (m *mission) engineArgv() ([]string, error) {
	switch m.eng.Kind {
	case "command":
		fi, err := os.Stat(m.eng.Path)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("engine %s is not an executable file", m.eng.Name())
		}
		return []string{m.eng.Path}, nil
	}
	if a, ok := adapters[m.eng.Kind]; ok {
		p, err := a.toolPath(m.d.getenv)
		if err != nil {
			return nil, err
		}
		if _, err := a.toolVersion(m.rc.Context(), p); err != nil {
			return nil, err
		}
		return []string{p}, nil
	}
	return nil, fmt.Errorf("engine %s has no adapter in this build yet", m.eng.Name())
}

func (m *mission) linked(ctx context.Context) (*gitx.Linked, error) {
	return gitx.OpenLinked(ctx, m.in.Workspace, m.setup.GitDir)
}

func (m *mission) runDirs() (sandbox.RunPaths, error) {
	return sandbox.RunDirs(m.d.RunDirBase, m.rc.RunID())
}

// engineStep runs the engine: one non-idempotent step. Its reconcile probe
// cannot tell what an interrupted engine did, so the owner is asked:
// "it ran — continue" keeps the partial changes and verifies them,
// "it did not run — run it" reruns the engine from the base, "abort"
// abandons the mission.
func (m *mission) engineStep() (EngineOutcome, error) {
	var eo EngineOutcome
	res, err := m.rc.Step(kernel.StepSpec{Kind: "engine", Name: m.eng.Name(), Effect: kernel.EffectNonIdempotent,
		Request: map[string]any{"engine": m.eng.Name(), "argv": m.setup.Argv, "base": m.setup.Base, "workspace": m.in.Workspace},
		Reconcile: func(context.Context, json.RawMessage, string) (kernel.ReconcileOutcome, error) {
			return kernel.ReconcileOutcome{Answer: kernel.ReconcileUnknown}, nil
		},
		AssumedResult: EngineOutcome{Status: OutcomeInterrupted, Summary: "The engine was interrupted by a crash; the owner chose to keep and verify its partial changes."},
	}, func(ctx context.Context, _ string) (kernel.Outcome, error) {
		return m.execEngine(ctx)
	})
	if err != nil {
		return eo, err
	}
	if err := json.Unmarshal(res, &eo); err != nil {
		return eo, fmt.Errorf("backend: decode engine outcome: %w", err)
	}
	return eo, nil
}

func (m *mission) execEngine(ctx context.Context) (kernel.Outcome, error) {
	l, err := m.linked(ctx)
	if err != nil {
		return kernel.Outcome{}, fmt.Errorf("backend: open worktree: %w", err)
	}
	// A first run finds the worktree at the base; a rerun after a crash
	// starts from the base again.
	if err := ResetToBase(ctx, l, m.setup.Base); err != nil {
		return kernel.Outcome{}, fmt.Errorf("backend: reset worktree to base: %w", err)
	}
	dirs, err := m.runDirs()
	if err != nil {
		return kernel.Outcome{}, err
	}
	led, err := ledgerFor(m.d.DataDir, m.rc.RunID())
	if err != nil {
		return kernel.Outcome{}, err
	}
	timeout := defaultEngineTimeout
	if m.in.TimeoutSec > 0 {
		timeout = time.Duration(m.in.TimeoutSec) * time.Second
	}
	left := m.rc.BudgetLeft()
	if left.WallSec >= 0 {
		timeout = min(timeout, time.Duration(max(left.WallSec, 1))*time.Second)
	}
	hide, expose := m.confinement()
	network := sandbox.NetworkNone
	if m.in.Network == "open" {
		// slirp4netns's outbound NAT, host loopback refused: the proxy is
		// still reached only through the forwarder below.
		network = sandbox.NetworkOpen
	}
	ln := launch{Argv: m.setup.Argv, Workspace: m.in.Workspace, Dirs: dirs, Network: network, Timeout: timeout, Hide: hide, Expose: expose,
		Request: RuntimeRequest{Schema: RequestSchema, MissionID: m.rc.MissionID(), Goal: m.in.Objective, Instructions: m.in.Boundaries,
			SuccessCriteria: nonNil(m.in.Criteria), Worktree: m.in.Workspace, BaseCommit: m.setup.Base, Branch: m.branch, Network: string(network),
			VerificationPolicy: "aos re-runs each verification argv in its sandbox only if it matches the owner's allowlist; do not commit or push"}}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var px *proxyRun
	if m.d.Proxy != nil {
		prior, err := led.total()
		if err != nil {
			return kernel.Outcome{}, err
		}
		onCall := func(total Spend) {
			// Live only (watch, console): the ledger and the step's result
			// are the record.
			m.rc.EmitTransient("engine.model_call", map[string]any{"engine": m.eng.Name(), "calls": total.Calls, "usd": total.USD,
				"inputTokens": total.InputTokens, "outputTokens": total.OutputTokens})
		}
		if px, err = m.d.Proxy.start(ctx, m.meterLimits(prior), led, onCall, func() { cancel(errBudgetSpent) }); err != nil {
			return kernel.Outcome{}, err
		}
		defer px.close()
		ln.Env, ln.Wrap, ln.ExtraFiles, ln.Request.ModelBaseURL = px.env(), px.wrap(), px.extraFiles(), px.engineURL()
		ln.Listen = true // the forwarder serves the proxy on the sandbox's own 127.0.0.1
	}
	if a, ok := adapters[m.eng.Kind]; ok {
		if err := a.launch(&ln, m.setup.Argv[0], m.in.Model); err != nil {
			return kernel.Outcome{}, err
		}
		ln.OnLine = func(line []byte) {
			if ev, ok := a.event(line); ok {
				m.rc.EmitTransient("engine.event", ev)
			}
		}
		if a.final != nil {
			ln.OnOutput = func(out []byte) {
				for _, ev := range a.final(out) {
					m.rc.EmitTransient("engine.event", ev)
				}
			}
		}
	}
	if m.eng.Kind == "command" {
		name := m.eng.Name()
		ln.OnErrLine = func(line []byte) {
			if ev, ok := commandEvent(name, line); ok {
				m.rc.EmitTransient("engine.event", ev)
			}
		}
	}
	eo, err := runEngine(ctx, m.d.Sandbox, ln)
	if err != nil {
		return kernel.Outcome{}, err
	}
	if errors.Is(context.Cause(ctx), errBudgetSpent) && m.rc.Context().Err() == nil {
		eo.Status, eo.Killed = OutcomeKilled, "budget"
		eo.Summary = "the mission's budget was spent; aos killed the engine's processes"
	}
	spend, err := led.total()
	if err != nil {
		return kernel.Outcome{}, err
	}
	eo.Spend = spend
	return kernel.Outcome{Result: eo, Usage: spend.usage()}, nil
}

var errBudgetSpent = errors.New("backend: budget spent")

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// meterLimits is what the proxy may spend: the run's budgets left, less
// what earlier interrupted executions already spent (not yet charged).
func (m *mission) meterLimits(prior Spend) limits {
	left := m.rc.BudgetLeft()
	l := limits{usd: math.Inf(1), turns: -1, prior: prior}
	if !math.IsInf(left.USD, 1) {
		l.usd = left.USD - prior.USD
	}
	if left.Turns >= 0 {
		l.turns = left.Turns - prior.Calls
	}
	return l
}

// chargeInterrupted charges the model calls of an interrupted engine run
// whose changes the owner kept.
func (m *mission) chargeInterrupted() (Spend, error) {
	var s Spend
	res, err := m.rc.Step(kernel.StepSpec{Kind: "engine", Name: "charge_interrupted", Effect: kernel.EffectIdempotentWrite},
		func(ctx context.Context, _ string) (kernel.Outcome, error) {
			led, err := ledgerFor(m.d.DataDir, m.rc.RunID())
			if err != nil {
				return kernel.Outcome{}, err
			}
			t, err := led.total()
			return kernel.Outcome{Result: t, Usage: t.usage()}, err
		})
	if err == nil {
		err = json.Unmarshal(res, &s)
	}
	return s, err
}

// inspectStep reads and stages the change (idempotent: staging the same
// worktree again gives the same index).
func (m *mission) inspectStep() (Inspection, error) {
	var insp Inspection
	res, err := m.rc.Step(kernel.StepSpec{Kind: "verify", Name: "inspect", Effect: kernel.EffectIdempotentWrite,
		Request: map[string]string{"base": m.setup.Base, "branch": m.branch}},
		func(ctx context.Context, _ string) (kernel.Outcome, error) {
			l, err := m.linked(ctx)
			var ge *gitx.Error
			if errors.As(err, &ge) {
				return kernel.Outcome{Result: Inspection{Base: m.setup.Base, Refusal: ge.Msg, Files: []FileChange{}, WriteSet: []string{}}}, nil
			}
			if err != nil {
				return kernel.Outcome{}, err
			}
			in, err := Inspect(ctx, l, m.setup.Base, m.branch)
			return kernel.Outcome{Result: in}, err
		})
	if err != nil {
		return insp, err
	}
	return insp, json.Unmarshal(res, &insp)
}

// end builds the run's result envelope and removes the run's TMPDIR and
// HOME.
func (m *mission) end(status, summary string, out Outcome) (kernel.Result, error) {
	if dirs, err := sandbox.RunDirs(m.d.RunDirBase, m.rc.RunID()); err == nil {
		_ = os.RemoveAll(dirs.Root)
	}
	out.Summary = summary
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return kernel.Result{}, fmt.Errorf("backend: encode outcome: %w", err)
	}
	return kernel.Result{Status: status, Summary: summary, Payload: bytes.TrimSpace(buf.Bytes())}, nil
}
