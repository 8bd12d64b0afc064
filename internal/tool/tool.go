package tool

import (
	"context"
	"encoding/json"

	"github.com/aos-run/aos/internal/sandbox"
)

// Effect says what running a tool does to the world, for journaling and
// replay. The values equal the kernel's effect classes.
type Effect string

// Effect classes.
const (
	EffectPure            Effect = "pure"
	EffectRead            Effect = "read"
	EffectModelCall       Effect = "model_call"
	EffectIdempotentWrite Effect = "idempotent_write"
	EffectNonIdempotent   Effect = "non_idempotent"
)

// Risk classifies a call for policy: what could go wrong if it is allowed.
type Risk string

// Risk classes.
const (
	RiskRead           Risk = "read"
	RiskWorkspaceWrite Risk = "workspace_write"
	RiskNetwork        Risk = "network"
	RiskExternal       Risk = "external"
)

// Trust marks whether a result's content may carry instructions from
// outside the owner (file contents, command output, remote text).
type Trust string

// Trust values.
const (
	TrustTrusted   Trust = "trusted"
	TrustUntrusted Trust = "untrusted"
)

// Result is what a tool returns to the model (seed §4/§10 ToolRunResult).
type Result struct {
	OK     bool   `json:"ok"`
	Output string `json:"output"`
	Trust  Trust  `json:"trust,omitempty"`
	// FileStateOut maps workspace-relative paths to the sha256 of the
	// content this call read or wrote, for edit staleness checks.
	FileStateOut map[string]string `json:"fileStateOut,omitempty"`
	Diff         string            `json:"diff,omitempty"`
	// Control carries a control tool's structured payload for the engine.
	Control json.RawMessage `json:"control,omitempty"`
}

// Approval is how a call is shown to the owner when policy asks.
type Approval struct {
	Title  string `json:"title"`
	Detail string `json:"detail"`
	Diff   string `json:"diff,omitempty"`
}

// Artifacts stores and reads a run's artifacts. The kernel implements it.
type Artifacts interface {
	Put(ctx context.Context, name string, data []byte, mime string) (sha256 string, size int64, err error)
	Get(ctx context.Context, name string) ([]byte, error)
}

// Runner runs a sandboxed command; *sandbox.Sandbox implements it.
type Runner interface {
	Run(ctx context.Context, spec sandbox.Spec) (sandbox.Outcome, error)
}

// Context is what a tool call knows about its run. The call's
// context.Context is passed to Run separately.
type Context struct {
	RunID     string
	MissionID string
	// Workspace is the absolute real path of the project directory.
	Workspace string
	// Network is the mission's network mode.
	Network sandbox.Network
	DataDir string
	// IdemKey identifies this call across replays (the step's key).
	IdemKey   string
	Artifacts Artifacts
	// FileState maps workspace-relative paths to the sha256 this run last
	// read or wrote (from earlier results' FileStateOut). Nil turns the
	// staleness check off; a non-nil map turns it on.
	FileState map[string]string
	// Sandbox runs shell commands; nil means no shell.
	Sandbox Runner
	// ExtraDenyRead are more absolute paths the shell must not read.
	ExtraDenyRead []string
	// TmpDir and Home are the run's TMPDIR and HOME for the shell; empty
	// means a fresh one per call.
	TmpDir, Home string
}

// Tool is one agent tool. Input is the model's raw JSON arguments; every
// method decodes it strictly (unknown fields are refused).
type Tool interface {
	Name() string
	Description() string
	// Schema is a strict JSON schema: additionalProperties false and every
	// property required (optional ones are nullable).
	Schema() json.RawMessage
	// Validate decodes and checks input without side effects, so that the
	// engine can refuse a call before it becomes a step.
	Validate(input json.RawMessage) error
	Effect(input json.RawMessage) Effect
	Risk(input json.RawMessage, network sandbox.Network) Risk
	ParallelSafe() bool
	Run(ctx context.Context, tc *Context, input json.RawMessage) (Result, error)
	DescribeForApproval(input json.RawMessage) Approval
}

// ReconcileState is what Reconcile found out about an interrupted call.
type ReconcileState string

// Reconcile states.
const (
	ReconcileDone    ReconcileState = "done"
	ReconcileNotDone ReconcileState = "not_done"
	ReconcileUnknown ReconcileState = "unknown"
)

// Reconciliation is Reconcile's answer; Output is set when State is done.
type Reconciliation struct {
	State  ReconcileState `json:"state"`
	Output string         `json:"output,omitempty"`
	// FileStateOut is what a done call leaves the run knowing of the
	// files it wrote, as Result.FileStateOut is for a call that ran.
	FileStateOut map[string]string `json:"fileStateOut,omitempty"`
}

// Reconciler is implemented by tools that can tell, after a crash, whether
// an interrupted call took effect.
type Reconciler interface {
	Reconcile(ctx context.Context, tc *Context, input json.RawMessage) (Reconciliation, error)
}
