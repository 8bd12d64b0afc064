package agent

import "context"

// Limits from seed 000.
const (
	// MaxQueryLen bounds store.list's query, in characters.
	MaxQueryLen = 200
	// MaxOffset is store.list's largest offset.
	MaxOffset = 25000
	// DefaultLimit is store.list's page size when none is given.
	DefaultLimit = 10
	// MaxLimit is store.list's largest page size.
	MaxLimit = 10
	// MaxCandidates bounds store.inspect's candidate agents.
	MaxCandidates = 5
	// MaxDoctorLines and MaxDoctorLineLen bound cached doctor output.
	MaxDoctorLines   = 10
	MaxDoctorLineLen = 400
	// MaxActiveJobs is the number of preparation jobs that run at once.
	MaxActiveJobs = 4
	// MaxWorkspacePath bounds an existing workspace's path.
	MaxWorkspacePath = 4096
	// MaxWorkspaceName bounds a new workspace's name.
	MaxWorkspaceName = 100
	// MaxIdempotencyKey bounds an idempotency key.
	MaxIdempotencyKey = 64
)

// Installation states of a package.
const (
	InstallNotInstalled = "not_installed"
	InstallInstalled    = "installed"
	InstallInstalling   = "installing"
	InstallBroken       = "broken"
)

// Readiness states of a package.
const (
	ReadinessNotInstalled = "not_installed"
	ReadinessUnknown      = "unknown"
	ReadinessPassed       = "passed"
	ReadinessFailed       = "failed"
)

// Operation states.
const (
	StateAccepted        = "accepted"
	StateRunning         = "running"
	StateReady           = "ready"
	StateFailed          = "failed"
	StateNeedsUserAction = "needs_user_action"
)

// Operation phases, in order: accepted → install / clone / setup → doctor
// → workspace → create → launch → complete.
const (
	PhaseAccepted  = "accepted"
	PhaseInstall   = "install"
	PhaseClone     = "clone"
	PhaseSetup     = "setup"
	PhaseDoctor    = "doctor"
	PhaseWorkspace = "workspace"
	PhaseCreate    = "create"
	PhaseLaunch    = "launch"
	PhaseComplete  = "complete"
)

// Agent runtime states.
const (
	RuntimeStarting    = "starting"
	RuntimeReady       = "ready"
	RuntimeUnavailable = "unavailable"
)

// Workspace kinds.
const (
	WorkspaceNew      = "new"
	WorkspaceExisting = "existing"
)

// Prepare statuses.
const (
	StatusAccepted  = "accepted"
	StatusDuplicate = "duplicate"
)

// Receipt states of a turn.
const (
	ReceiptAccepted = "accepted"
	ReceiptFailed   = "failed"
)

// Identity of the owner's CLI/API. A device's identity is "device:<id>".
const OwnerIdentity = "owner"

// StoreListRequest is store.list's input.
type StoreListRequest struct {
	Query  string `json:"query,omitempty"`
	Offset *int   `json:"offset,omitempty"`
	Limit  *int   `json:"limit,omitempty"`
}

// StoreListResult is store.list's result (without type/requestId).
type StoreListResult struct {
	MachineID  string    `json:"machineId"`
	Packages   []Package `json:"packages"`
	NextOffset *int      `json:"nextOffset"`
}

// StoreInspectResult is store.inspect's result (without type/requestId).
type StoreInspectResult struct {
	MachineID           string  `json:"machineId"`
	Package             Package `json:"package"`
	Candidates          []Agent `json:"candidates"`
	CandidatesTruncated bool    `json:"candidatesTruncated"`
}

// Package is a catalog or installed package as seed 000 shows it.
type Package struct {
	PackageID       string           `json:"packageId"`
	Name            string           `json:"name"`
	Description     string           `json:"description"`
	Category        string           `json:"category"`
	Engine          string           `json:"engine"`
	Catalog         bool             `json:"catalog"`
	Installed       bool             `json:"installed"`
	Verified        bool             `json:"verified"`
	InstallAllowed  bool             `json:"installAllowed"`
	ViewerPackageID *string          `json:"viewerPackageId"`
	Version         *string          `json:"version"`
	Broken          *string          `json:"broken"`
	Capabilities    Capabilities     `json:"capabilities"`
	Requirements    Requirements     `json:"requirements"`
	Installation    string           `json:"installation"`
	Readiness       Readiness        `json:"readiness"`
	LastPreparation *LastPreparation `json:"lastPreparation"`
}

// Capabilities are descriptive claims from metadata; Source is always
// "package_metadata".
type Capabilities struct {
	Source      string `json:"source"`
	Description string `json:"description"`
	Category    string `json:"category"`
}

// Requirements names what a package needs; Applications is always null.
type Requirements struct {
	Engine          string    `json:"engine"`
	ViewerPackageID *string   `json:"viewerPackageId"`
	Applications    *[]string `json:"applications"`
	Note            string    `json:"note"`
}

// Readiness is a package's last doctor observation. Scope is
// "package_doctor"; EngineAuthentication and TaskSuccess are "unknown".
type Readiness struct {
	State                string   `json:"state"`
	Scope                string   `json:"scope"`
	EngineAuthentication string   `json:"engineAuthentication"`
	TaskSuccess          string   `json:"taskSuccess"`
	CheckedAt            *int64   `json:"checkedAt,omitempty"`
	Version              *string  `json:"version,omitempty"`
	Lines                []string `json:"lines,omitempty"`
}

// LastPreparation is the latest in-memory preparation of a package.
type LastPreparation struct {
	State     string   `json:"state"`
	Phase     string   `json:"phase"`
	Error     *OpError `json:"error"`
	UpdatedAt int64    `json:"updatedAt"`
}

// Agent is a persistent agent built from a package.
type Agent struct {
	AgentID   string   `json:"agentId"`
	MachineID string   `json:"machineId"`
	PackageID *string  `json:"packageId"`
	Engine    string   `json:"engine"`
	Workspace *string  `json:"workspace"`
	State     string   `json:"state,omitempty"`
	Runtime   string   `json:"runtime"`
	Error     *OpError `json:"error,omitempty"`
}

// Workspace is a preparation's workspace: exactly one of {kind:"new",
// name?} or {kind:"existing", path}.
type Workspace struct {
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
	Path string `json:"path,omitempty"`
}

// PrepareRequest is agent.prepare's input (without type/requestId).
type PrepareRequest struct {
	MachineID      string    `json:"machineId"`
	PackageID      string    `json:"packageId"`
	IdempotencyKey string    `json:"idempotencyKey"`
	Workspace      Workspace `json:"workspace"`
}

// PrepareResult is agent.prepare's result (without type/requestId).
type PrepareResult struct {
	Status    string    `json:"status"`
	Operation Operation `json:"operation"`
}

// Operation is a durable preparation operation. CreatedAt and UpdatedAt
// are Unix milliseconds. TaskDispatched is always false and
// EngineAuthentication always "unknown".
type Operation struct {
	OperationID          string   `json:"operationId"`
	MachineID            string   `json:"machineId"`
	PackageID            string   `json:"packageId"`
	State                string   `json:"state"`
	Phase                string   `json:"phase"`
	CreatedAt            int64    `json:"createdAt"`
	UpdatedAt            int64    `json:"updatedAt"`
	AgentID              *string  `json:"agentId"`
	Workspace            *string  `json:"workspace"`
	Error                *OpError `json:"error"`
	Guidance             *string  `json:"guidance"`
	Doctor               []string `json:"doctor"`
	TaskDispatched       bool     `json:"taskDispatched"`
	EngineAuthentication string   `json:"engineAuthentication"`
}

// OpError is an error recorded on an operation or an agent.
type OpError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// TurnSendRequest is turn.send's input (without type/requestId).
type TurnSendRequest struct {
	MachineID      string `json:"machineId"`
	AgentID        string `json:"agentId"`
	IdempotencyKey string `json:"idempotencyKey"`
	Text           string `json:"text"`
}

// Receipt is a turn's durable delivery receipt. MissionID names the
// mission the turn created; Duplicate is true when the key was seen before.
type Receipt struct {
	ReceiptID string   `json:"receiptId"`
	AgentID   string   `json:"agentId"`
	MissionID string   `json:"missionId"`
	State     string   `json:"state"`
	CreatedAt int64    `json:"createdAt"`
	Duplicate bool     `json:"duplicate,omitempty"`
	Error     *OpError `json:"error"`
	// MissionStatus is the mission's status when the receipt is answered
	// (the mission service's: queued, running and waiting, then done,
	// partial, blocked, failed, budget_exhausted or cancelled), so a device
	// can watch the mission finish without the owner API. Absent while the
	// turn has no mission, or if its status could not be read.
	MissionStatus string `json:"missionStatus,omitempty" enum:"queued,running,waiting,done,partial,blocked,failed,budget_exhausted,cancelled"`
}

// API is what front ends (CLI, owner API, the device channel) call.
// identity is "owner" or "device:<id>"; it scopes idempotency keys and
// operations.
type API interface {
	StoreList(ctx context.Context, identity string, r StoreListRequest) (StoreListResult, error)
	StoreInspect(ctx context.Context, identity, packageID string) (StoreInspectResult, error)
	Prepare(ctx context.Context, identity string, r PrepareRequest) (PrepareResult, error)
	Operation(ctx context.Context, identity, operationID string) (Operation, error)
	SendTurn(ctx context.Context, identity string, r TurnSendRequest) (Receipt, error)
	Receipt(ctx context.Context, identity, receiptID string) (Receipt, error)
	Revoke(ctx context.Context, identity string) error
	MachineID() string
}

var _ API = (*Service)(nil)
