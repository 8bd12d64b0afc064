package wire

import (
	"encoding/json"
)

// Mission is a mission as presented.
type Mission struct {
	ID        string          `json:"id"`
	ProjectID string          `json:"projectId"`
	Title     string          `json:"title"`
	Status    string          `json:"status" enum:"queued,running,waiting,done,partial,blocked,failed,budget_exhausted,cancelled"`
	RootRunID string          `json:"rootRunId"`
	SpentUSD  float64         `json:"spentUsd"`
	Model     string          `json:"model,omitempty"`
	Effort    string          `json:"effort,omitempty" enum:"low,medium,high,xhigh,max"`
	Spec      json.RawMessage `json:"spec"`
	Result    json.RawMessage `json:"result,omitempty"`
	Git       *GitResult      `json:"git,omitempty"`
	CreatedAt int64           `json:"createdAt"`
	UpdatedAt int64           `json:"updatedAt"`
	EndedAt   int64           `json:"endedAt,omitempty"`
}

// GitResult says where a mission's work is: every mission works in its own
// worktree on Branch, from Base; the owner's checkout is never touched.
type GitResult struct {
	Branch string `json:"branch"`
	Base   string `json:"base"`
	// Snapshot is the commit of the owner's uncommitted changes the
	// mission started from (includeUncommitted), when there were any.
	Snapshot string `json:"snapshot,omitempty"`
	// Log, Diff and Merge are the git commands that show and take the
	// result, to run in the project.
	Log   string `json:"log"`
	Diff  string `json:"diff"`
	Merge string `json:"merge"`
}

// CreateRequest asks for a new mission. Omitted model, effort and budgets
// take the defaults from settings.
type CreateRequest struct {
	Title      string   `json:"title,omitempty"`
	Objective  string   `json:"objective"`
	Criteria   []string `json:"criteria,omitempty"`
	Boundaries string   `json:"boundaries,omitempty"`
	ProjectID  string   `json:"projectId,omitempty"`
	// Workspace is a directory inside the workspace root, absolute or
	// relative to the root. It defaults to the directory of ProjectID,
	// which must name a registered project when set.
	Workspace          string   `json:"workspace,omitempty"`
	Model              string   `json:"model,omitempty"`
	Effort             string   `json:"effort,omitempty" enum:"low,medium,high,xhigh,max"`
	Network            string   `json:"network,omitempty" enum:"none,open"`
	BudgetUSD          *float64 `json:"budgetUsd,omitempty"`
	MaxTurns           *int     `json:"maxTurns,omitempty"`
	MaxWallSec         *int64   `json:"maxWallSec,omitempty"`
	ApprovalTimeoutSec int64    `json:"approvalTimeoutSec,omitempty"`
	// Engine is builtin or an external engine: command:/abs/path, codex,
	// claude or openclaw (docs/ENGINES.md). Empty takes the project's
	// default (defaults.engine in .aos/config.yaml), else builtin.
	Engine string `json:"engine,omitempty"`
	// Verify are verification commands (argv) aos re-runs for an external
	// engine's work, if the verification allowlist allows them.
	Verify [][]string `json:"verify,omitempty"`
	// IncludeUncommitted starts the mission from the project's uncommitted
	// changes (tracked and untracked, .gitignore respected) as well as its
	// HEAD: they are snapshotted into a commit without touching the
	// owner's index.
	IncludeUncommitted bool `json:"includeUncommitted,omitempty"`
	// Local marks a mission of `aos run` (or aos demo): the owner at this
	// machine runs it in their own process. Its Workspace is the project
	// directory the owner named, anywhere on the machine (see
	// localProject), and only that process, or `aos resume`, claims it
	// (engine.LocalLogicName). Never set from the API.
	Local bool `json:"-"`
	// VerifyAllow are allowlisted verification command prefixes an owner
	// at this machine adds for a local external-engine mission (aos run
	// --verify-allow). Never set from the API.
	VerifyAllow []string `json:"-"`
	// VerifyLabels name Verify's commands, one each (aos run --verify's
	// text). Never set from the API.
	VerifyLabels []string `json:"-"`
}
