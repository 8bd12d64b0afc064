package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/sandbox"
)

// VerifyResult is one verification command and what aos saw re-running it.
type VerifyResult struct {
	Label string   `json:"label,omitempty"`
	Argv  []string `json:"argv"`
	Cwd   string   `json:"cwd"`
	// Source is mission (the mission's criteria commands) or engine.
	Source  string `json:"source"`
	Allowed bool   `json:"allowed"`
	// Rule is the allowlist prefix that allowed it, or why it was refused.
	Rule       string `json:"rule"`
	Ran        bool   `json:"ran"`
	ExitCode   int    `json:"exitCode"`
	Passed     bool   `json:"passed"`
	TimedOut   bool   `json:"timedOut,omitempty"`
	DurationMS int64  `json:"durationMs,omitempty"`
	OutputTail string `json:"outputTail,omitempty"`
}

// verifyCwd runs argv in a directory below the worktree.
const verifyCwd = `cd -- "$1" && shift && exec "$@"`

// verify re-runs the mission's and the engine's verification commands
// that the allowlist allows, each as its own journaled step; the others
// are refused and reported.
func (m *mission) verify(fromEngine []Verification) ([]VerifyResult, error) {
	var al Allowlist
	res, err := m.rc.Step(kernel.StepSpec{Kind: "verify", Name: "allowlist", Effect: kernel.EffectRead, Request: map[string]any{"projectId": m.in.ProjectID, "config": m.in.VerifyAllow}},
		func(ctx context.Context, _ string) (kernel.Outcome, error) {
			if m.d.Rules == nil {
				return kernel.Outcome{Result: NewAllowlist(nil, m.in.VerifyAllow)}, nil
			}
			rules, err := m.d.Rules(ctx, m.in.ProjectID)
			return kernel.Outcome{Result: NewAllowlist(rules, m.in.VerifyAllow)}, err
		})
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(res, &al); err != nil {
		return nil, fmt.Errorf("backend: decode allowlist: %w", err)
	}
	type cand struct {
		v      Verification
		source string
	}
	var cands []cand
	for _, v := range m.in.Verify {
		cands = append(cands, cand{v, "mission"})
	}
	for _, v := range fromEngine {
		cands = append(cands, cand{v, "engine"})
	}
	out := []VerifyResult{}
	for i, c := range cands {
		vr := VerifyResult{Label: c.v.Label, Argv: c.v.Argv, Cwd: c.v.Cwd, Source: c.source}
		if vr.Cwd == "" {
			vr.Cwd = "."
		}
		vr.Allowed, vr.Rule = al.Allows(c.v.Argv)
		if vr.Allowed {
			res, err := m.rc.Step(kernel.StepSpec{Kind: "verify", Name: "run", Effect: kernel.EffectIdempotentWrite, Announce: true,
				Request: map[string]any{"i": i, "argv": c.v.Argv, "cwd": vr.Cwd}},
				func(ctx context.Context, _ string) (kernel.Outcome, error) {
					r, err := m.runVerification(ctx, vr, c.v.TimeoutSeconds)
					return kernel.Outcome{Result: r}, err
				})
			if err != nil {
				return nil, err
			}
			if err := json.Unmarshal(res, &vr); err != nil {
				return nil, fmt.Errorf("backend: decode verification: %w", err)
			}
		}
		if err := m.rc.Emit("verify.command", vr); err != nil {
			return nil, err
		}
		out = append(out, vr)
	}
	return out, nil
}

func (m *mission) runVerification(ctx context.Context, vr VerifyResult, timeoutSec int) (VerifyResult, error) {
	dirs, err := m.runDirs()
	if err != nil {
		return vr, err
	}
	if timeoutSec <= 0 {
		timeoutSec = DefaultVerifyTimeout
	}
	argv := append([]string{"/bin/sh", "-c", verifyCwd, "aos-verify", vr.Cwd}, vr.Argv...)
	hide, expose := m.confinement()
	o, err := m.d.Sandbox.Run(ctx, sandbox.Spec{Argv: argv, Workspace: m.in.Workspace, TmpDir: dirs.TmpDir, Home: dirs.Home,
		Network: sandbox.NetworkNone, Timeout: time.Duration(timeoutSec) * time.Second, ReadOnly: []string{".git"}, Hide: hide, Expose: expose})
	if err != nil {
		return vr, fmt.Errorf("backend: run verification in the sandbox: %w", err)
	}
	vr.Ran, vr.ExitCode, vr.TimedOut, vr.DurationMS = true, o.ExitCode, o.TimedOut, o.Duration.Milliseconds()
	vr.Passed = o.ExitCode == 0 && !o.TimedOut && !o.Cancelled && !o.OutputExceeded
	out := o.Output
	if len(out) > 4000 {
		out = out[len(out)-4000:]
	}
	vr.OutputTail = strings.TrimSpace(clipLines(string(bytes.ToValidUTF8(out, []byte("?")))))
	return vr, nil
}

// verdict: verification passes when at least one command ran and every
// command passed (a refused command fails it).
func verdict(vs []VerifyResult) (bool, string) {
	if len(vs) == 0 {
		return false, "no verification command was given (the mission's criteria commands or the engine's verification list)"
	}
	for _, v := range vs {
		switch {
		case !v.Allowed:
			return false, fmt.Sprintf("verification %q was refused: %s", strings.Join(v.Argv, " "), v.Rule)
		case !v.Passed:
			return false, fmt.Sprintf("verification %q failed (exit %d)", strings.Join(v.Argv, " "), v.ExitCode)
		}
	}
	return true, ""
}

func (m *mission) criteria(vs []VerifyResult, passed bool) []Criterion {
	var ev []string
	for _, v := range vs {
		s := "refused"
		if v.Ran {
			s = fmt.Sprintf("exit %d", v.ExitCode)
		}
		ev = append(ev, fmt.Sprintf("%s: %s", strings.Join(v.Argv, " "), s))
	}
	out := []Criterion{}
	for i, c := range m.in.Criteria {
		out = append(out, Criterion{ID: fmt.Sprintf("c%d", i+1), Text: c, Passes: passed, Evidence: clip(strings.Join(ev, "; "), 2000)})
	}
	return out
}

// commitStep makes the governed commit. Its reconcile probe reads the
// branch: a commit on the base carrying this mission's trailer is the
// commit; HEAD still at the base means it did not happen.
func (m *mission) commitStep(vs []VerifyResult) (string, error) {
	var labels []string
	for _, v := range vs {
		labels = append(labels, strings.Join(v.Argv, " "))
	}
	msg := fmt.Sprintf("%s\n\n%s\n\nAos-Mission: %s\nAos-Engine: %s\nAos-Verified: %s\n", firstLineOf(m.in.Objective), clip(m.eng.Name(), 200),
		m.rc.MissionID(), m.eng.Name(), clip(strings.Join(labels, "; "), 500))
	reconcile := func(ctx context.Context, _ json.RawMessage, _ string) (kernel.ReconcileOutcome, error) {
		l, err := m.linked(ctx)
		if err != nil {
			return kernel.ReconcileOutcome{}, err
		}
		head, err := git(ctx, l, gitx.Cmd{Args: []string{"rev-parse", "--verify", "HEAD^{commit}"}})
		if err != nil {
			return kernel.ReconcileOutcome{}, err
		}
		head = strings.TrimSpace(head)
		if head == m.setup.Base {
			return kernel.ReconcileOutcome{Answer: kernel.ReconcileNotDone}, nil
		}
		body, err := git(ctx, l, gitx.Cmd{Args: []string{"log", "-1", "--format=%P%n%B", head}})
		if err == nil && strings.HasPrefix(body, m.setup.Base+"\n") && strings.Contains(body, "Aos-Mission: "+m.rc.MissionID()+"\n") {
			return kernel.ReconcileOutcome{Answer: kernel.ReconcileDone, Result: map[string]string{"commit": head}}, nil
		}
		return kernel.ReconcileOutcome{Answer: kernel.ReconcileUnknown}, nil
	}
	res, err := m.rc.Step(kernel.StepSpec{Kind: "git", Name: "commit", Effect: kernel.EffectNonIdempotent, Reconcile: reconcile,
		Request: map[string]string{"branch": m.branch, "base": m.setup.Base, "message": msg}},
		func(ctx context.Context, _ string) (kernel.Outcome, error) {
			l, err := m.linked(ctx)
			if err != nil {
				return kernel.Outcome{}, err
			}
			c, err := Commit(ctx, l, msg)
			return kernel.Outcome{Result: map[string]string{"commit": c}}, err
		})
	if err != nil {
		return "", err
	}
	var v struct {
		Commit string `json:"commit"`
	}
	return v.Commit, json.Unmarshal(res, &v)
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return clip(l, 72)
}

// ChangeSet is the immutable record of what an engine changed and what aos
// verified, stored content-addressed as a kernel artifact.
type ChangeSet struct {
	Schema       string          `json:"schema"`
	MissionID    string          `json:"missionId"`
	RunID        string          `json:"runId"`
	Engine       string          `json:"engine"`
	Branch       string          `json:"branch"`
	BaseCommit   string          `json:"baseCommit"`
	Commit       string          `json:"commit,omitempty"`
	Files        []FileChange    `json:"files"`
	WriteSet     []string        `json:"writeSet"`
	Refusal      string          `json:"refusal,omitempty"`
	Findings     []Finding       `json:"findings,omitempty"`
	Verification []VerifyResult  `json:"verification"`
	EngineStatus string          `json:"engineStatus"`
	Evidence     json.RawMessage `json:"engineEvidence,omitempty"`
}

// ChangeSetSchema names the change-set record's format.
const ChangeSetSchema = "aos.change-set.v1"

func (m *mission) recordChangeSet(out *Outcome) error {
	if m.d.Kernel == nil || out.Inspection == nil {
		return nil
	}
	cs := ChangeSet{Schema: ChangeSetSchema, MissionID: m.rc.MissionID(), RunID: m.rc.RunID(), Engine: m.eng.Name(), Branch: m.branch,
		BaseCommit: m.setup.Base, Commit: out.Commit, Files: out.Inspection.Files, WriteSet: out.Inspection.WriteSet, Refusal: out.Inspection.Refusal,
		Findings: out.Inspection.Findings, Verification: nonNilVR(out.Verification), EngineStatus: out.EngineResult.Status, Evidence: out.EngineResult.Evidence}
	body, err := kernel.CanonicalJSON(cs)
	if err != nil {
		return fmt.Errorf("backend: encode change set: %w", err)
	}
	res, err := m.rc.Step(kernel.StepSpec{Kind: "artifact", Name: "change_set", Effect: kernel.EffectIdempotentWrite, Request: json.RawMessage(body)},
		func(ctx context.Context, _ string) (kernel.Outcome, error) {
			sha, _, err := m.d.Kernel.PutArtifact(ctx, bytes.NewReader(body), kernel.ArtifactMeta{Name: "change-set.json", Mime: "application/json", RunID: m.rc.RunID(), StepSeq: -1})
			return kernel.Outcome{Result: map[string]string{"sha256": sha}}, err
		})
	if err != nil {
		return err
	}
	var v struct {
		SHA string `json:"sha256"`
	}
	if err := json.Unmarshal(res, &v); err != nil {
		return fmt.Errorf("backend: decode change set: %w", err)
	}
	out.ChangeSet = v.SHA
	return m.rc.Emit("changeset.recorded", map[string]any{"sha256": v.SHA, "commit": out.Commit, "files": len(cs.Files)})
}

func nonNilVR(v []VerifyResult) []VerifyResult {
	if v == nil {
		return []VerifyResult{}
	}
	return v
}
