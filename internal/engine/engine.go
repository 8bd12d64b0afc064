package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/policy"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/tool"
)

// Deps are what the agent loop needs from the process around it.
type Deps struct {
	// Adapter builds the provider adapter that serves model. It must not
	// fail for a missing key: Call reports that.
	Adapter func(model string) (provider.Adapter, error)
	// Tools are the agent's tools, in the order the model sees them.
	Tools *tool.Registry
	// Sandbox runs shell commands; nil leaves the shell failing closed.
	Sandbox tool.Runner
	// Kernel stores artifacts.
	Kernel *kernel.Kernel
	// Rules returns the owner's policy rules for a project (and global).
	Rules func(ctx context.Context, projectID string) ([]policy.Rule, error)
	// AddRule stores a remembered approval; a rule whose id exists is
	// already stored and is not an error.
	AddRule func(ctx context.Context, r policy.Rule) error
	// DataDir is aos's data dir; ExtraDenyRead are paths the shell must
	// not read.
	DataDir       string
	ExtraDenyRead []string
	// WorktreeRoot holds each mission's git worktree (<root>/<mission
	// id>); empty means DefaultWorktreeRoot(DataDir). It must lie outside
	// DataDir, which the sandbox hides.
	WorktreeRoot string
	// RunDirBase holds each run's TMPDIR and HOME (aos-run-<id>); empty
	// means the system temp dir. It must lie outside DataDir.
	RunDirBase string
	// ContextWindow is the context window assumed for models whose window
	// is unknown (200 000 by default).
	ContextWindow int64
	// Local says the loop runs in the process of `aos run` or `aos
	// resume`: what it tells the owner to do applies to that terminal, not
	// to a worker.
	Local bool
}

// Limits of the loop (seed §5).
const (
	maxNudges          = 2
	stallRepeat        = 3
	stallTurns         = 15
	contextNoteFrac    = 0.70
	contextStopFrac    = 0.90
	budgetFinalFrac    = 0.90
	modelRetryAttempts = 3
)

// modelRetrySleeps are the durable sleeps after a model call whose
// retryable failure outlived the adapter's own retries.
var modelRetrySleeps = [modelRetryAttempts]int64{30_000, 120_000, 300_000}

// AgentLogic returns the agent loop as a kernel logic.
func AgentLogic(d Deps) kernel.Logic {
	return func(rc kernel.RunContext) (kernel.Result, error) {
		in, err := decodeInput(rc.Input())
		if err != nil {
			return kernel.Result{Status: kernel.StatusFailed, Summary: err.Error()}, nil
		}
		a, err := d.Adapter(in.Model)
		if err != nil {
			return kernel.Result{Status: kernel.StatusBlocked, Summary: "model " + in.Model + ": " + err.Error()}, nil
		}
		l := &loop{d: d, rc: rc, in: in, a: a, fileState: map[string]string{}, model: in.Model, used: map[string]bool{in.Model: true}, runner: d.Sandbox}
		if ws, ok := d.Sandbox.(warmer); ok {
			// One warm sandbox for this execution of the run's logic: it
			// is torn down when the logic returns, whether the run ended,
			// paused on a durable wait or its worker stopped.
			w := ws.NewWarm()
			defer w.Close()
			l.runner = w
		}
		return l.run()
	}
}

// warmer is a sandbox that can keep one warm sandbox per run
// (*sandbox.Sandbox).
type warmer interface {
	NewWarm() *sandbox.Warm
}

// missingKeySummary is the summary of a mission blocked because the key of
// its model's provider is not set: what to do, with the mission's real id,
// where the mission runs.
func missingKeySummary(local bool, envVar, missionID string) string {
	if local {
		return "No API key for the model's provider: set " + envVar + " in this shell's environment (export " + envVar +
			"=…), then run the mission again with aos run (mission " + missionID + " stays blocked)."
	}
	return "No API key for the model's provider: set " + envVar + " in the worker's environment and restart it (aos up), " +
		"then retry the mission: aos mission retry " + missionID
}

// loop is one execution of the agent loop; all of it is rebuilt on replay.
type loop struct {
	d  Deps
	rc kernel.RunContext
	in Input
	a  provider.Adapter
	// model is the route's current target (in.Model until a failover);
	// used are the targets taken, never taken again; hops the route
	// history; failures the failed model calls (the model stage's
	// failure budget). All are rebuilt from the journal on replay.
	model    string
	used     map[string]bool
	hops     []Hop
	failures int
	blocker  string

	system     string
	tools      []provider.ToolDef
	toolNames  []string
	transcript provider.Transcript
	digest     transcriptDigest // of transcript, kept running

	criteria  []Criterion
	confirmed bool
	fileState map[string]string

	turn          int
	nudges        int
	finalTurn     bool
	contextNoted  bool
	lastCallKey   string
	sameCalls     int
	sinceProgress int
	stallTriggers int
	lastInputToks int64
	finalTurnDone bool
	runDirs       *sandbox.RunPaths // the run's TMPDIR and HOME, made on first use
	wt            *worktreeInfo     // the mission's worktree, once made
	runner        tool.Runner       // runs shell commands: the run's warm sandbox, or Deps.Sandbox
}

func (l *loop) run() (kernel.Result, error) {
	if err := l.setup(); err != nil {
		return kernel.Result{}, err
	}
	for {
		if res, done, err := l.turnOnce(); err != nil || done {
			return res, err
		}
	}
}

// setup journals the mission's worktree and the frozen prefix.
func (l *loop) setup() error {
	wt, err := l.addWorktree()
	if err != nil {
		return err
	}
	l.wt = &wt
	for i, c := range l.in.Criteria {
		l.criteria = append(l.criteria, Criterion{ID: fmt.Sprintf("c%d", i+1), Text: c})
	}
	l.confirmed = len(l.criteria) > 0
	allowed := map[string]bool{}
	for _, n := range l.in.Tools {
		allowed[n] = true
	}
	for _, t := range l.d.Tools.All() {
		if len(allowed) > 0 && !allowed[t.Name()] {
			continue
		}
		l.tools = append(l.tools, provider.ToolDef{Name: t.Name(), Description: t.Description(), InputSchema: t.Schema()})
		l.toolNames = append(l.toolNames, t.Name())
	}
	var prefix struct {
		System     string `json:"system"`
		PromptHash string `json:"promptHash"`
	}
	res, err := l.rc.Step(kernel.StepSpec{Kind: "setup", Name: "prefix", Effect: kernel.EffectRead, Request: map[string]any{"toolNames": l.toolNames}},
		func(ctx context.Context, _ string) (kernel.Outcome, error) {
			name, text := projectInstructions(l.wt.Path)
			sys := systemPrompt(l.in, name, text)
			sum := sha256.Sum256([]byte(sys))
			return kernel.Outcome{Result: map[string]string{"system": sys, "promptHash": hex.EncodeToString(sum[:])}}, nil
		})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(res, &prefix); err != nil {
		return fmt.Errorf("engine: decode prefix: %w", err)
	}
	l.system = prefix.System
	l.transcript = l.a.InitTranscript(firstMessage(l.in, l.criteria))
	return nil
}

func (l *loop) branch() string { return Branch(l.rc.MissionID()) }

// modelResult is the model_call step's result: the response, or the
// provider failure that the loop decides on deterministically.
type modelResult struct {
	provider.Response
	Failure *modelFailure `json:"failure,omitempty"`
	// Target is the model called, and Route the route history before
	// the call, when the mission has a route.
	Target string `json:"target,omitempty"`
	Route  []Hop  `json:"route,omitempty"`
}

type modelFailure struct {
	Retryable  bool   `json:"retryable"`
	Status     int    `json:"status,omitempty"`
	Code       string `json:"code,omitempty"`
	Message    string `json:"message"`
	MissingKey string `json:"missingKey,omitempty"`
	// Blocker is set by the loop (never journaled) when the failure ends
	// the run: failure_budget_exhausted or route_exhausted.
	Blocker string `json:"-"`
}

// callModel runs one model_call step.
func (l *loop) callModel() (modelResult, error) {
	req := map[string]any{"model": l.model, "effort": l.in.Effort, "turn": l.turn, "transcriptSha256": l.digest.sum(l.transcript), "toolNames": l.toolNames}
	var out modelResult
	res, err := l.rc.Step(kernel.StepSpec{Kind: "model_call", Name: "model", Effect: kernel.EffectModelCall, Request: req, LiveAnnounce: true},
		func(ctx context.Context, _ string) (kernel.Outcome, error) {
			turn := l.turn
			var target string
			var hops []Hop
			if l.in.Route != nil {
				target, hops = l.model, append([]Hop(nil), l.hops...)
			}
			l.rc.EmitTransient("model.delta", map[string]any{"reset": true, "turn": turn})
			resp, err := l.a.Call(ctx, provider.Request{Model: l.model, Effort: provider.Effort(l.in.Effort), System: l.system, Tools: l.tools,
				Transcript: l.transcript, OnDelta: func(dl provider.Delta) {
					l.rc.EmitTransient("model.delta", map[string]any{"turn": turn, "type": dl.Type, "text": dl.Text})
				}})
			if err != nil {
				if ctx.Err() != nil {
					return kernel.Outcome{}, err
				}
				return kernel.Outcome{Result: modelResult{Failure: failureOf(err), Target: target, Route: hops}}, nil
			}
			u := resp.Usage
			return kernel.Outcome{Result: modelResult{Response: *resp, Target: target, Route: hops}, Usage: kernel.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
				CacheReadTokens: u.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens, CostUSD: l.a.Price(resp.Model, u)}}, nil
		})
	if err != nil {
		return out, err
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return out, fmt.Errorf("engine: decode model result: %w", err)
	}
	return out, nil
}

func failureOf(err error) *modelFailure {
	var mk *provider.MissingKeyError
	if errors.As(err, &mk) {
		return &modelFailure{Message: mk.Error(), MissingKey: mk.EnvVar}
	}
	var pe *provider.ProviderError
	if errors.As(err, &pe) {
		return &modelFailure{Retryable: pe.Retryable, Status: pe.Status, Code: pe.Code, Message: pe.Error()}
	}
	return &modelFailure{Message: err.Error()}
}

func (l *loop) note(text string) {
	l.transcript = l.a.AppendOperatorNote(l.transcript, l.model, text)
}

// end removes the mission's worktree (its branch stays), builds the run's
// result envelope and removes the run's TMPDIR and HOME.
func (l *loop) end(status, summary string, evidence, questions []string) (kernel.Result, bool, error) {
	if err := l.removeWorktree(); err != nil {
		return kernel.Result{}, false, err
	}
	if dirs, err := sandbox.RunDirs(l.d.RunDirBase, l.rc.RunID()); err == nil {
		_ = os.RemoveAll(dirs.Root)
	}
	u := l.rc.Usage()
	out := Outcome{Summary: summary, Evidence: evidence, OpenQuestions: questions, Criteria: l.criteria, Turns: u.Turns, SpentUSD: u.CostUSD, Route: l.hops, Blocker: l.blocker}
	if l.wt != nil {
		out.Branch, out.Base = l.wt.Branch, l.wt.Base
	}
	body, err := json.Marshal(out)
	if err != nil {
		return kernel.Result{}, true, fmt.Errorf("engine: encode outcome: %w", err)
	}
	return kernel.Result{Status: status, Summary: summary, Payload: body}, true, nil
}

// turnOnce runs one turn: steering, the model call, tools. done ends the
// run with res.
func (l *loop) turnOnce() (res kernel.Result, done bool, err error) {
	msgs, err := l.rc.OwnerMessages()
	if err != nil {
		return res, false, err
	}
	for _, m := range msgs {
		l.transcript = l.a.AppendUser(l.transcript, "Message from the owner (steering):\n"+m.Text)
	}
	left := l.rc.BudgetLeft()
	if left.Fraction >= 1 && l.finalTurnDone {
		return l.end(kernel.StatusBudgetExhausted, "The mission's budget is used up.", nil, nil)
	}
	if !l.finalTurn && left.Fraction >= budgetFinalFrac-1e-9 {
		l.finalTurn = true
		l.note("aos: 90% of this mission's budget is used. This is your final turn: summarise the state of the work and call finish now.")
	}
	mr, err := l.modelWithRetries()
	if errors.Is(err, kernel.ErrBudgetExhausted) {
		return l.end(kernel.StatusBudgetExhausted, "The budget is used up: "+err.Error(), nil, nil)
	}
	if err != nil {
		return res, false, err
	}
	if f := mr.Failure; f != nil {
		if f.MissingKey != "" {
			return l.end(kernel.StatusBlocked, missingKeySummary(l.d.Local, f.MissingKey, l.rc.MissionID()), nil, nil)
		}
		if f.Blocker != "" {
			return l.blocked(f)
		}
		return l.end(kernel.StatusBlocked, "The model call failed: "+f.Message, nil, nil)
	}
	l.turn++
	l.lastInputToks = mr.Usage.InputTokens + mr.Usage.CacheReadTokens + mr.Usage.CacheWriteTokens
	if len(mr.Native) > 0 {
		l.transcript = provider.Append(l.transcript, mr.Native)
	}
	if l.finalTurn {
		l.finalTurnDone = true
	}
	switch mr.Stop {
	case provider.StopRefusal:
		cat := ""
		if mr.Refusal != nil {
			cat = mr.Refusal.Category
		}
		return l.end(kernel.StatusBlocked, "The model refused to continue (category: "+orDash(cat)+").", nil, nil)
	case provider.StopContextExceeded:
		return l.end(kernel.StatusPartial, "The conversation no longer fits the model's context window.", nil, nil)
	}
	calls := mr.ToolCalls()
	truncated := len(mr.Blocks) > 0 && hasTruncated(mr.Blocks)
	if len(calls) == 0 {
		switch mr.Stop {
		case provider.StopMaxTokens:
			msg := "aos: your output was cut off at the output limit. Continue where you stopped."
			if truncated {
				msg = "aos: your last tool call was cut off at the output limit and was not executed. Send it again, smaller (split large writes)."
			}
			l.note(msg)
			return res, false, nil
		case provider.StopPauseTurn:
			return res, false, nil
		}
		if l.finalTurn {
			return l.end(kernel.StatusBudgetExhausted, "Budget used up. Last words: "+lastText(mr.Blocks), nil, nil)
		}
		if l.nudges >= maxNudges {
			return l.end(kernel.StatusPartial, "The model stopped without finishing: "+lastText(mr.Blocks), nil, nil)
		}
		l.nudges++
		l.note("aos: you ended your turn without calling a tool. Continue working toward the done criteria, or call finish with a status and a summary.")
		return res, false, nil
	}
	res, done, err = l.runCalls(calls)
	if err != nil || done {
		return res, done, err
	}
	if truncated {
		l.note("aos: one tool call was cut off at the output limit and was not executed. Send it again, smaller.")
	}
	if l.finalTurn {
		return l.end(kernel.StatusBudgetExhausted, "Budget used up after the final summarising turn.", nil, nil)
	}
	return l.guards()
}

// modelWithRetries calls the model; a retryable failure that outlived the
// adapter's retries is retried after durable sleeps of 30 s, 2 min, 5 min.
//
// With a route, a failure counts against the model stage's failure budget
// (failure_budget_exhausted at its limit), and a failure of a class the
// route fails over on moves at once to the next unused target, never back
// to a failed one (route_exhausted when none is left).
func (l *loop) modelWithRetries() (modelResult, error) {
	for attempt := 0; ; attempt++ {
		mr, err := l.callModel()
		if err != nil || mr.Failure == nil {
			return mr, err
		}
		if r := l.in.Route; r != nil {
			l.failures++
			if r.FailureBudget > 0 && l.failures >= r.FailureBudget {
				mr.Failure.Blocker = BlockerFailureBudgetExhausted
				return mr, nil
			}
			if r.failsOver(classOf(mr.Failure)) {
				if !l.failover(mr.Failure) {
					mr.Failure.Blocker = BlockerRouteExhausted
					return mr, nil
				}
				h := l.hops[len(l.hops)-1]
				if err := l.rc.Emit("system.notice", map[string]any{"code": "model.failover", "message": "The model " + h.From + " failed (" + h.Class + "); failing over to " + h.To + ".",
					"from": h.From, "to": h.To, "class": h.Class}); err != nil {
					return mr, err
				}
				attempt = -1
				continue
			}
		}
		if !mr.Failure.Retryable || attempt >= modelRetryAttempts {
			return mr, nil
		}
		if err := l.rc.Emit("system.notice", map[string]any{"code": "model.retry", "message": "The model call failed; retrying after a pause.", "attempt": attempt + 1}); err != nil {
			return mr, err
		}
		if err := l.rc.Sleep(modelRetrySleeps[attempt]); err != nil {
			return mr, err
		}
	}
}

// guards runs the stall detector and the context guard after a turn.
func (l *loop) guards() (kernel.Result, bool, error) {
	window := l.in.ContextWindow
	if window == 0 {
		if m, ok := provider.CatalogueModel(l.model); ok && m.ContextWindow > 0 {
			window = m.ContextWindow
		} else if l.d.ContextWindow > 0 {
			window = l.d.ContextWindow
		} else {
			window = 200_000
		}
	}
	frac := float64(l.lastInputToks) / float64(window)
	if frac >= contextStopFrac {
		return l.end(kernel.StatusPartial, fmt.Sprintf("Stopped at %.0f%% of the model's context window. %s", frac*100, l.stateSummary()), nil, nil)
	}
	if frac >= contextNoteFrac && !l.contextNoted {
		l.contextNoted = true
		l.note("aos: the conversation uses over 70% of the model's context window. Wrap up: commit verified work, update the criteria, and finish soon.")
	}
	if l.sameCalls >= stallRepeat || l.sinceProgress >= stallTurns {
		l.sameCalls, l.sinceProgress = 0, 0
		l.stallTriggers++
		if l.stallTriggers == 1 {
			l.note("aos: you appear stuck (the same call keeps giving the same result, or no progress for many turns). Re-plan, or ask the owner.")
			return kernel.Result{}, false, nil
		}
		out, err := l.rc.Wait(kernel.WaitQuestion, map[string]any{"text": "The agent appears stuck. Let it continue?",
			"detail": l.stateSummary(), "options": []string{"Let it continue", "Stop the mission"}, "source": "stall"}, l.in.approvalTimeout())
		if err != nil {
			return kernel.Result{}, false, err
		}
		if out.Expired() || answerText(out.Resolution) == "Stop the mission" {
			return l.end(kernel.StatusPartial, "Stopped by the owner after the agent appeared stuck. "+l.stateSummary(), nil, nil)
		}
		l.stallTriggers = 0
		l.note("aos: the owner lets you continue. Change approach.")
	}
	return kernel.Result{}, false, nil
}

func (l *loop) stateSummary() string {
	pass := 0
	for _, c := range l.criteria {
		if c.Passes {
			pass++
		}
	}
	turns := "turns"
	if l.turn == 1 {
		turns = "turn"
	}
	return fmt.Sprintf("%d %s; %d of %d criteria pass.", l.turn, turns, pass, len(l.criteria))
}

func hasTruncated(bs []provider.Block) bool {
	for _, b := range bs {
		if b.Type == provider.BlockToolUse && b.Truncated {
			return true
		}
	}
	return false
}

func lastText(bs []provider.Block) string {
	for i := len(bs) - 1; i >= 0; i-- {
		if bs[i].Type == provider.BlockText && bs[i].Text != "" {
			t := bs[i].Text
			if len(t) > 500 {
				t = t[:500] + "…"
			}
			return t
		}
	}
	return "—"
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}
