package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/policy"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/tool"
)

// stepResult is a tool_call step's result (seed §10).
type stepResult struct {
	OK           bool              `json:"ok"`
	Content      string            `json:"content"`
	Artifact     *tool.ArtifactRef `json:"artifact,omitempty"`
	Trust        tool.Trust        `json:"trust,omitempty"`
	FileStateOut map[string]string `json:"fileStateOut,omitempty"`
	Diff         string            `json:"diff,omitempty"`
}

// plannedCall is a tool call after validation and policy.
type plannedCall struct {
	block  provider.Block
	t      tool.Tool
	result *provider.ToolResult // set when refused, or for control tools
	run    bool
}

// runCalls validates, decides and executes one turn's tool calls, and
// appends all their results as one batch.
func (l *loop) runCalls(calls []provider.Block) (kernel.Result, bool, error) {
	rules, err := l.loadRules()
	if err != nil {
		return kernel.Result{}, false, err
	}
	plans := make([]*plannedCall, len(calls))
	progress := false
	// Phase 1, in call order: validation, policy, approvals, and control
	// tools. Waits suspend here, before anything executes.
	for i, c := range calls {
		p := &plannedCall{block: c}
		plans[i] = p
		t, ok := l.d.Tools.Get(c.Name)
		if !ok {
			p.result = refused(c, fmt.Sprintf("unknown tool %q", c.Name))
			continue
		}
		p.t = t
		if err := t.Validate(c.Input); err != nil {
			p.result = refused(c, "invalid input: "+err.Error())
			continue
		}
		if isControl(c.Name) {
			res, done, err := l.control(c, p)
			if err != nil || done {
				return res, done, err
			}
			if p.result != nil && !p.result.IsError && c.Name != "ask_owner" {
				progress = true
			}
			continue
		}
		allowed, err := l.decide(c, t, rules)
		if err != nil {
			return kernel.Result{}, false, err
		}
		if allowed != "" {
			p.result = refused(c, allowed)
			continue
		}
		p.run = true
	}
	// Phase 2: execution. Parallel-safe calls start at once, their step
	// numbers taken in call order; any other call first waits for them.
	var pending []func() error
	flush := func() error {
		for _, f := range pending {
			if err := f(); err != nil {
				return err
			}
		}
		pending = nil
		return nil
	}
	results := make([]provider.ToolResult, len(plans))
	for i, p := range plans {
		if !p.run {
			results[i] = *p.result
			continue
		}
		if p.t.ParallelSafe() {
			fut := l.rc.Go(l.toolSpec(p), l.toolExec(p))
			pending = append(pending, func() error {
				res, err := fut.Await()
				if err != nil {
					return err
				}
				results[i] = l.absorb(p, res, &progress)
				return nil
			})
			continue
		}
		if err := flush(); err != nil {
			return kernel.Result{}, false, err
		}
		res, err := l.rc.Step(l.toolSpec(p), l.toolExec(p))
		if err != nil {
			return kernel.Result{}, false, err
		}
		results[i] = l.absorb(p, res, &progress)
	}
	if err := flush(); err != nil {
		return kernel.Result{}, false, err
	}
	l.transcript = l.a.AppendToolResults(l.transcript, results)
	l.trackStall(calls, results, progress)
	return kernel.Result{}, false, nil
}

func refused(c provider.Block, msg string) *provider.ToolResult {
	return &provider.ToolResult{CallID: c.ID, Name: c.Name, Content: msg, IsError: true}
}

func isControl(name string) bool {
	switch name {
	case "finish", "ask_owner", "update_criteria", "propose_criteria":
		return true
	}
	return false
}

// loadRules journals the owner's rules for this turn, so that replay sees
// the rules the decisions were made under.
func (l *loop) loadRules() ([]policy.Rule, error) {
	if l.d.Rules == nil {
		return nil, nil
	}
	res, err := l.rc.Step(kernel.StepSpec{Kind: "policy", Name: "policy_rules", Effect: kernel.EffectRead, Request: map[string]any{"projectId": l.in.ProjectID, "turn": l.turn}},
		func(ctx context.Context, _ string) (kernel.Outcome, error) {
			// The request keeps naming the project id only, so runs journaled
			// before rules were scoped replay unchanged; the workspace is
			// fixed for a run.
			rs, err := l.d.Rules(ctx, l.scope())
			if rs == nil {
				rs = []policy.Rule{}
			}
			return kernel.Outcome{Result: rs}, err
		})
	if err != nil {
		return nil, err
	}
	var rules []policy.Rule
	if err := json.Unmarshal(res, &rules); err != nil {
		return nil, fmt.Errorf("engine: decode rules: %w", err)
	}
	return rules, nil
}

// decide applies policy to a call, asking the owner when policy says ask.
// It returns "" when the call may run, else the refusal the model reads.
func (l *loop) decide(c provider.Block, t tool.Tool, rules []policy.Rule) (string, error) {
	net := sandbox.Network(l.in.network())
	risk := t.Risk(c.Input, net)
	call := policy.Call{Tool: c.Name, Risk: policy.Risk(risk), Allowed: l.allowed(c.Name), NetworkNone: net == sandbox.NetworkNone,
		CriteriaConfirmed: l.confirmed, ProjectID: l.scope(), Protected: protectedTarget(c)}
	if c.Name == "shell" {
		call.Command = shellCommand(c.Input)
	}
	v := policy.Decide(call, rules)
	event := map[string]any{"tool": c.Name, "callId": c.ID, "risk": risk, "decision": v.Decision, "reason": v.Reason, "source": v.Source}
	if v.RuleID != "" {
		event["ruleId"] = v.RuleID
	}
	if v.Decision != policy.Ask {
		if err := l.rc.Emit("policy.decision", event); err != nil {
			return "", err
		}
		if v.Decision == policy.Deny {
			return "Denied by owner/policy: " + v.Reason, nil
		}
		return "", nil
	}
	ap := t.DescribeForApproval(c.Input)
	payload := map[string]any{"tool": c.Name, "input": c.Input, "risk": risk, "title": ap.Title, "detail": ap.Detail, "reason": v.Reason, "callId": c.ID}
	if ap.Diff != "" {
		payload["diff"] = ap.Diff
	}
	out, err := l.rc.Wait(kernel.WaitApproval, payload, l.in.approvalTimeout())
	if err != nil {
		return "", err
	}
	approved, remember, why := approvalOf(out)
	event["decision"], event["source"] = policy.Deny, policy.SourceOwner
	if out.Expired() {
		event["source"], event["reason"] = policy.SourceExpiry, "the approval expired"
		why = "the approval request expired"
	}
	if approved {
		event["decision"], event["reason"] = policy.Allow, "approved by the owner"
	}
	if approved && remember {
		if err := l.remember(c.Name, call.Command, event); err != nil {
			return "", err
		}
	}
	if err := l.rc.Emit("policy.decision", event); err != nil {
		return "", err
	}
	if approved {
		return "", nil
	}
	if why == "" {
		why = "the owner declined"
	}
	return "Denied by owner/policy: " + why, nil
}

// scope is what this mission's rules are stored and matched under: its
// project, or its workspace directory when it has none (policy.Scope).
func (l *loop) scope() string { return policy.Scope(l.in.ProjectID, l.in.Workspace) }

// remember stores an approved call as an allow rule scoped to this
// project or workspace. A shell command that must not become a prefix
// rule (operators, a bare interpreter, a wrapper) is not remembered; the
// event says why.
func (l *loop) remember(toolName, command string, event map[string]any) error {
	rule := policy.Rule{Tool: toolName, ProjectID: l.scope(), Decision: policy.Allow}
	if toolName == "shell" {
		prefix, refusal := policy.RememberPrefix(command)
		if refusal != "" {
			event["remembered"], event["notRemembered"] = false, refusal
			return nil
		}
		rule.CommandPrefix = prefix
	}
	if _, err := l.rc.Step(kernel.StepSpec{Kind: "policy", Name: "remember_rule", Effect: kernel.EffectIdempotentWrite, Request: rule},
		func(ctx context.Context, key string) (kernel.Outcome, error) {
			rule.ID = "r-" + strings.ReplaceAll(key, "/", "-")
			if l.d.AddRule == nil {
				return kernel.Outcome{Result: rule}, nil
			}
			return kernel.Outcome{Result: rule}, l.d.AddRule(ctx, rule)
		}); err != nil {
		return err
	}
	event["remembered"], event["rule"] = true, rule
	return nil
}

func (l *loop) allowed(name string) bool {
	for _, n := range l.toolNames {
		if n == name {
			return true
		}
	}
	return false
}

// approvalOf reads an approval's resolution: {"approved": bool,
// "remember": bool, "reason": "…"}, or a plain "approve"/"deny".
func approvalOf(out kernel.WaitOutcome) (approved, remember bool, reason string) {
	if out.Expired() {
		return false, false, ""
	}
	var r struct {
		Approved *bool  `json:"approved"`
		Remember bool   `json:"remember"`
		Reason   string `json:"reason"`
	}
	if json.Unmarshal(out.Resolution, &r) == nil && r.Approved != nil {
		return *r.Approved, r.Remember, r.Reason
	}
	switch strings.ToLower(answerText(out.Resolution)) {
	case "approve", "approved", "yes", "allow":
		return true, false, ""
	}
	return false, false, ""
}

// answerText reads a question's answer: a JSON string or {"answer": "…"}.
func answerText(res json.RawMessage) string {
	var s string
	if json.Unmarshal(res, &s) == nil {
		return s
	}
	var o struct {
		Answer string `json:"answer"`
	}
	_ = json.Unmarshal(res, &o)
	return o.Answer
}

// protectedTarget is the protected path a file-writing call targets, if
// any. The tools refuse these too; policy denies them before asking.
func protectedTarget(c provider.Block) string {
	switch c.Name {
	case "write_file", "edit_file":
	default:
		return ""
	}
	var in struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(c.Input, &in) != nil {
		return ""
	}
	p := strings.TrimPrefix(strings.TrimPrefix(in.Path, "./"), "/")
	for _, pre := range []string{".git/", ".aos/"} {
		if p+"/" == pre || strings.HasPrefix(p, pre) {
			return in.Path
		}
	}
	switch p {
	case "AGENTS.md", "CLAUDE.md", ".bashrc", ".profile", ".zshrc", ".bash_profile":
		return in.Path
	}
	return ""
}

func shellCommand(input json.RawMessage) string {
	var in struct {
		Command string `json:"command"`
	}
	_ = json.Unmarshal(input, &in)
	return in.Command
}

func (l *loop) toolSpec(p *plannedCall) kernel.StepSpec {
	spec := kernel.StepSpec{Kind: "tool_call", Name: p.block.Name, Effect: kernel.Effect(p.t.Effect(p.block.Input)),
		Request: map[string]any{"name": p.block.Name, "input": p.block.Input, "callId": p.block.ID}, Announce: true}
	if r, ok := p.t.(tool.Reconciler); ok {
		base := toolCtx{l.toolContext("")} // built in the loop's goroutine; the probe may run in a step's
		spec.Reconcile = func(ctx context.Context, _ json.RawMessage, key string) (kernel.ReconcileOutcome, error) {
			rec, err := r.Reconcile(ctx, base.withKey(key), p.block.Input)
			if err != nil {
				return kernel.ReconcileOutcome{}, err
			}
			switch rec.State {
			case tool.ReconcileDone:
				return kernel.ReconcileOutcome{Answer: kernel.ReconcileDone, Result: stepResult{OK: true, Content: rec.Output, FileStateOut: rec.FileStateOut}}, nil
			case tool.ReconcileNotDone:
				return kernel.ReconcileOutcome{Answer: kernel.ReconcileNotDone}, nil
			}
			return kernel.ReconcileOutcome{Answer: kernel.ReconcileUnknown}, nil
		}
	}
	if p.block.Name == "shell" && l.d.DataDir != "" {
		probe := probeCapture(l.d.DataDir)
		reaper, _ := l.d.Sandbox.(interface{ ReapOrphans() })
		spec.Reconcile = func(ctx context.Context, req json.RawMessage, key string) (kernel.ReconcileOutcome, error) {
			if reaper != nil {
				// A command of the dead process that is somehow still
				// running must not act after the answer.
				reaper.ReapOrphans()
			}
			return probe(ctx, req, key)
		}
	}
	// Any step may be asked about after a crash (non_idempotent ones with
	// no probe or an unsure one). When the owner answers that it ran, the
	// model reads a truthful, successful result rather than an empty error,
	// which it would likely answer by running the call again.
	spec.AssumedResult = assumedResult(p.block.Name)
	spec.Subject = &kernel.Subject{Tool: p.block.Name, Input: p.block.Input, Summary: subjectSummary(p)}
	return spec
}

// assumedResult is the result recorded for a call the owner confirmed ran
// before a crash, whose output aos never captured.
func assumedResult(name string) stepResult {
	what := "This call (" + name + ")"
	if name == "shell" {
		what = "This command"
	}
	return stepResult{OK: true, Content: what + " ran before a crash; its output was not captured; the owner confirmed it ran. Do not run it again unless you need to."}
}

// maxSummary bounds a reconcile question's one-line summary; the exact
// input is in the question's input field.
const maxSummary = 2000

// subjectSummary is the line a reconcile question shows for a call: the
// shell's command, or the tool and its approval description.
func subjectSummary(p *plannedCall) string {
	s := p.block.Name + ": "
	if p.block.Name == "shell" {
		s += shellCommand(p.block.Input)
	} else {
		ap := p.t.DescribeForApproval(p.block.Input)
		s += ap.Title
		if ap.Detail != "" {
			s += " — " + ap.Detail
		}
	}
	if r := []rune(s); len(r) > maxSummary {
		s = string(r[:maxSummary]) + "…"
	}
	return s
}

// toolContext snapshots what a tool call may know of the run. It reads and
// writes loop state, so it runs in the loop's goroutine only.
func (l *loop) toolContext(idemKey string) *tool.Context {
	fs := make(map[string]string, len(l.fileState))
	for k, v := range l.fileState {
		fs[k] = v
	}
	tc := &tool.Context{RunID: l.rc.RunID(), MissionID: l.rc.MissionID(), Workspace: l.wt.Path, Network: sandbox.Network(l.in.network()),
		DataDir: l.d.DataDir, IdemKey: idemKey, Artifacts: &artifacts{k: l.d.Kernel, runID: l.rc.RunID()}, FileState: fs,
		Sandbox: l.runner, ExtraDenyRead: l.d.ExtraDenyRead}
	// The run's TMPDIR and HOME last across its commands (seed §4); if
	// they cannot be made, each command gets fresh ones.
	if l.runDirs == nil {
		if dirs, err := sandbox.RunDirs(l.d.RunDirBase, l.rc.RunID()); err == nil {
			l.runDirs = &dirs
		}
	}
	if l.runDirs != nil {
		tc.TmpDir, tc.Home = l.runDirs.TmpDir, l.runDirs.Home
	}
	return tc
}

func (l *loop) toolExec(p *plannedCall) kernel.ExecFunc {
	// The context is built now, in the loop's goroutine: a parallel-safe
	// call executes in its own goroutine while the loop folds other results
	// into the file states.
	base := toolCtx{l.toolContext("")}
	dataDir := l.d.DataDir
	return func(ctx context.Context, key string) (kernel.Outcome, error) {
		tc := base.withKey(key)
		capture := ""
		if p.block.Name == "shell" {
			if capture = capturePath(dataDir, key); capture != "" {
				if err := clearCapture(capture); err != nil {
					return kernel.Outcome{}, err
				}
			}
		}
		r, err := p.t.Run(ctx, tc, p.block.Input)
		if ctx.Err() != nil {
			// Interrupted: what ran is unknown, so nothing is captured.
			return kernel.Outcome{}, context.Cause(ctx)
		}
		if err != nil {
			r = tool.Result{OK: false, Output: "tool failed: " + err.Error()}
		}
		name := fmt.Sprintf("%s-%s.txt", p.block.Name, strings.NewReplacer("/", "-").Replace(key))
		shaped, err := tool.ShapeOutput(ctx, tc.Artifacts, name, r.Output)
		if err != nil {
			return kernel.Outcome{}, err
		}
		res := stepResult{OK: r.OK, Content: shaped.Content, Artifact: shaped.Artifact, Trust: r.Trust,
			FileStateOut: r.FileStateOut, Diff: r.Diff}
		if capture != "" {
			// Best effort: without a capture, a crash before the commit
			// is asked of the owner, as it was before captures.
			_ = writeCapture(capture, key, res)
		}
		return kernel.Outcome{Result: res}, nil
	}
}

// absorb folds a tool step's result into the loop's state.
func (l *loop) absorb(p *plannedCall, raw json.RawMessage, progress *bool) provider.ToolResult {
	var r stepResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return *refused(p.block, "engine: unreadable tool result")
	}
	for k, v := range r.FileStateOut {
		l.fileState[k] = v
	}
	if r.OK {
		switch kernel.Effect(p.t.Effect(p.block.Input)) {
		case kernel.EffectIdempotentWrite, kernel.EffectNonIdempotent:
			*progress = true
		}
	}
	return provider.ToolResult{CallID: p.block.ID, Name: p.block.Name, Content: r.Content, IsError: !r.OK}
}

// trackStall counts repeated identical calls with identical results, and
// turns without progress.
func (l *loop) trackStall(calls []provider.Block, results []provider.ToolResult, progress bool) {
	for i, r := range results {
		key := r.Name + "\x00" + string(calls[i].Input) + "\x00" + r.Content
		if key == l.lastCallKey {
			l.sameCalls++
		} else {
			l.lastCallKey, l.sameCalls = key, 1
		}
	}
	if progress {
		l.sinceProgress = 0
	} else {
		l.sinceProgress++
	}
}

// artifacts stores tool outputs through the kernel.
type artifacts struct {
	k     *kernel.Kernel
	runID string
}

func (a *artifacts) Put(ctx context.Context, name string, data []byte, mime string) (string, int64, error) {
	return a.k.PutArtifact(ctx, bytes.NewReader(data), kernel.ArtifactMeta{Name: name, Mime: mime, RunID: a.runID})
}

func (a *artifacts) Get(ctx context.Context, name string) ([]byte, error) {
	list, err := a.k.Store().ListArtifacts(ctx, a.runID)
	if err != nil {
		return nil, fmt.Errorf("engine: list artifacts: %w", err)
	}
	for _, m := range list {
		if m.Name == name {
			f, _, err := a.k.OpenArtifact(ctx, m.SHA256)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			var buf bytes.Buffer
			if _, err := buf.ReadFrom(f); err != nil {
				return nil, fmt.Errorf("engine: read artifact: %w", err)
			}
			return buf.Bytes(), nil
		}
	}
	return nil, fmt.Errorf("no artifact named %q in this run", name)
}

// toolCtx is a tool context that a step's goroutine may copy safely.
type toolCtx struct{ tc *tool.Context }

func (t toolCtx) withKey(key string) *tool.Context {
	c := *t.tc
	c.IdemKey = key
	return &c
}
