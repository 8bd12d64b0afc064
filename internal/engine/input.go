package engine

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/kernel"
)

// LogicName is the kernel logic name of the agent loop.
const LogicName = "aos.agent"

// LocalLogicName is the same agent loop for a mission that `aos run` runs in
// its own process. Only that process and `aos resume` register it, so a
// plain worker sharing the data dir (`aos up`, `aos worker`) never claims the
// mission and never runs it with its own environment.
const LocalLogicName = "aos.agent.local"

// DefaultApprovalTimeoutSec is how long an ask waits for the owner (72 h);
// expiry is a deny.
const DefaultApprovalTimeoutSec = 72 * 3600

// Input is a mission's root run input.
type Input struct {
	Objective string `json:"objective"`
	// Criteria are the done criteria's texts; empty asks the model to
	// propose them for the owner to confirm.
	Criteria   []string `json:"criteria,omitempty"`
	Boundaries string   `json:"boundaries,omitempty"`
	// Workspace is the project's absolute path: the owner's checkout. The
	// mission works in a worktree of it, never in it.
	Workspace string `json:"workspace"`
	// Base is the commit the mission's worktree starts at, recorded when
	// the mission is created (PrepareBase): the project's HEAD, or
	// Snapshot. Empty (a mission created without it) means HEAD when the
	// worktree is made.
	Base string `json:"base,omitempty"`
	// IncludeUncommitted asks for the owner's uncommitted changes (tracked
	// and untracked, .gitignore respected) in the base.
	IncludeUncommitted bool `json:"includeUncommitted,omitempty"`
	// Snapshot is the commit of those changes on top of HEAD, when there
	// were any.
	Snapshot            string `json:"snapshot,omitempty"`
	ProjectID           string `json:"projectId,omitempty"`
	ProjectInstructions string `json:"projectInstructions,omitempty"`
	Model               string `json:"model"`
	Effort              string `json:"effort,omitempty"`
	// Network is none (default) or open.
	Network string `json:"network,omitempty"`
	// Tools is the contract's allowlist; empty allows every tool.
	Tools              []string `json:"tools,omitempty"`
	ApprovalTimeoutSec int64    `json:"approvalTimeoutSec,omitempty"`
	// ContextWindow overrides the model's context window in tokens.
	ContextWindow int64 `json:"contextWindow,omitempty"`
	// Route is the selected route to fail over along, when the
	// configuration gave one.
	Route *Route `json:"route,omitempty"`
	// ConfigRevision is the configuration revision the mission was created
	// with; it stays pinned to it.
	ConfigRevision string `json:"configRevision,omitempty"`
}

// Validate checks an input before a mission is created.
func (in *Input) Validate() error {
	bad := func(msg string) error { return &kernel.Error{Code: kernel.CodeInvalidInput, Seq: -1, Msg: msg} }
	switch {
	case strings.TrimSpace(in.Objective) == "":
		return bad("objective is required")
	case len(in.Objective) > 64<<10:
		return bad("objective is longer than 64 KiB")
	case in.Workspace == "":
		return bad("workspace is required")
	case in.Model == "":
		return bad("model is required")
	case len(in.Criteria) > 20:
		return bad("at most 20 criteria")
	}
	for i, c := range in.Criteria {
		if strings.TrimSpace(c) == "" {
			return bad(fmt.Sprintf("criterion %d is empty", i+1))
		}
	}
	for _, c := range []string{in.Base, in.Snapshot} {
		if c != "" && !isHexID(c) {
			return bad("base and snapshot must be commit ids")
		}
	}
	switch in.Network {
	case "", "none", "open":
	default:
		return bad("network must be none or open")
	}
	if in.ApprovalTimeoutSec < 0 || in.ApprovalTimeoutSec > kernel.MaxWaitTimeoutSec {
		return bad("approval timeout out of range")
	}
	if msg := in.Route.validate(); msg != "" {
		return bad(msg)
	}
	return nil
}

func (in *Input) network() string {
	if in.Network == "" {
		return "none"
	}
	return in.Network
}

func (in *Input) approvalTimeout() int64 {
	if in.ApprovalTimeoutSec == 0 {
		return DefaultApprovalTimeoutSec
	}
	return in.ApprovalTimeoutSec
}

// Criterion is a done criterion and whether it passes, with evidence.
type Criterion struct {
	ID       string `json:"id"`
	Text     string `json:"text"`
	Passes   bool   `json:"passes"`
	Evidence string `json:"evidence,omitempty"`
}

// Outcome is the payload of the run's result envelope.
type Outcome struct {
	Summary       string      `json:"summary"`
	Evidence      []string    `json:"evidence,omitempty"`
	OpenQuestions []string    `json:"openQuestions,omitempty"`
	Criteria      []Criterion `json:"criteria"`
	Turns         int         `json:"turns"`
	SpentUSD      float64     `json:"spentUsd"`
	// Branch and Base say where the work is: git log Base..Branch.
	Branch string `json:"branch,omitempty"`
	Base   string `json:"base,omitempty"`
	// Route is the route history: every failover, and why.
	Route []Hop `json:"route,omitempty"`
	// Blocker is the blocker's code when the run ended blocked by its
	// route: failure_budget_exhausted or route_exhausted.
	Blocker string `json:"blocker,omitempty"`
}

func decodeInput(raw json.RawMessage) (Input, error) {
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, fmt.Errorf("engine: decode mission input: %w", err)
	}
	return in, in.Validate()
}

// isHexID reports whether s is a full SHA-1 or SHA-256 object id.
func isHexID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}
