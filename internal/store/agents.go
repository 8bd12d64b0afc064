package store

import "context"

// AgentQueries are the queries of agent packages (the installed index),
// preparation operations (the journal), agents (whose rows are the creation
// receipts) and turn receipts. Nothing here expires rows.
type AgentQueries interface {
	// UpsertAgentPackage inserts or replaces an installed-index row.
	UpsertAgentPackage(ctx context.Context, p AgentPackage) error
	// GetAgentPackage returns one row; ErrNotFound if there is none.
	GetAgentPackage(ctx context.Context, id string) (AgentPackage, error)
	// ListAgentPackages returns every row, by package id.
	ListAgentPackages(ctx context.Context) ([]AgentPackage, error)
	// ReviewAgentPackage records that the owner reviewed package id at
	// version: it sets reviewed_at only, and only while the row's version
	// is still version (a compare-and-set, so that a concurrent add of
	// another version is never marked reviewed). ErrConflict if the row
	// is gone or holds another version.
	ReviewAgentPackage(ctx context.Context, id, version string, reviewedAt int64) error

	// InsertAgentOperation reserves an operation; ErrConflict if its id or
	// its (identity, key) exists.
	InsertAgentOperation(ctx context.Context, o AgentOperation) error
	// GetAgentOperation returns one operation; ErrNotFound if none.
	GetAgentOperation(ctx context.Context, id string) (AgentOperation, error)
	// GetAgentOperationByKey returns identity's operation under key;
	// ErrNotFound if none.
	GetAgentOperationByKey(ctx context.Context, identity, key string) (AgentOperation, error)
	// UpdateAgentOperation writes an operation's progress (state, phase,
	// agent, workspace, error, guidance, doctor, updated_at), fenced by
	// o.Owner: ErrNotFound if there is no such operation owned by o.Owner
	// (another runner claimed it).
	UpdateAgentOperation(ctx context.Context, o AgentOperation) error
	// ListAgentOperationsInState returns the operations in one of states,
	// oldest first.
	ListAgentOperationsInState(ctx context.Context, states []string) ([]AgentOperation, error)
	// RenewAgentOperationLeases extends to leaseUntil, in one statement,
	// the lease of every accepted or running operation owner holds, and
	// returns how many it extended.
	RenewAgentOperationLeases(ctx context.Context, owner string, leaseUntil int64) (int64, error)
	// ReleaseAgentOperationLeases ends the leases of owner's accepted or
	// running operations (a stopping runner), so that recovery may take
	// them at once.
	ReleaseAgentOperationLeases(ctx context.Context, owner string) error
	// ClaimAgentOperation gives operation id to owner until leaseUntil if
	// it is accepted or running and its lease ended before now: a
	// compare-and-set, so two runners never both claim it. ErrConflict
	// if it is not claimable.
	ClaimAgentOperation(ctx context.Context, id, owner string, now, leaseUntil int64) error

	// ClaimAgentWorkspace records that operation opID prepares workspace,
	// taking over a claim whose operation is no longer accepted or
	// running; ErrConflict if an active operation holds it.
	ClaimAgentWorkspace(ctx context.Context, workspace, opID string, now int64) error
	// ReleaseAgentWorkspace drops opID's claim on workspace, if it holds it.
	ReleaseAgentWorkspace(ctx context.Context, workspace, opID string) error
	// StartAgentPackageInstall writes p (state installing) only if the
	// package has no row or its row is not installing, installed or
	// broken, and, for a community package, still holds p.Version and is
	// reviewed: a compare-and-set, so that of servers sharing the
	// database one installs, and never a version added since the caller
	// read the row. ErrConflict otherwise.
	StartAgentPackageInstall(ctx context.Context, p AgentPackage) error
	// MarkAgentPackageBroken marks an installing package broken with why,
	// if it is still installing as of updatedAt (a compare-and-set);
	// ErrConflict otherwise.
	MarkAgentPackageBroken(ctx context.Context, id string, updatedAt int64, why string, now int64) error

	// RevokeAgentIdentity records that identity's authorization ended
	// (idempotent: the first time is kept).
	RevokeAgentIdentity(ctx context.Context, identity string, now int64) error
	// AgentIdentityRevoked reports whether identity was revoked.
	AgentIdentityRevoked(ctx context.Context, identity string) (bool, error)

	// InsertAgent records an agent and its creation receipt; ErrConflict
	// if its id, workspace or operation has one already.
	InsertAgent(ctx context.Context, a AgentRecord) error
	// GetAgent returns one agent; ErrNotFound if none.
	GetAgent(ctx context.Context, id string) (AgentRecord, error)
	// GetAgentByOperation returns the agent an operation created;
	// ErrNotFound if none.
	GetAgentByOperation(ctx context.Context, operationID string) (AgentRecord, error)
	// GetAgentByWorkspace returns the agent whose canonical workspace is
	// dir; ErrNotFound if none.
	GetAgentByWorkspace(ctx context.Context, dir string) (AgentRecord, error)
	// ListAgents returns a page of agents, oldest first (by created_at,
	// id): of p.PackageID (all when ""), after the cursor p.After (from
	// the start when zero), at most p.Limit (1-1000; 0 is 1000).
	ListAgents(ctx context.Context, p ListAgentsParams) ([]AgentRecord, error)

	// InsertAgentTurn records a turn receipt; ErrConflict if its id or
	// (identity, key) exists.
	InsertAgentTurn(ctx context.Context, t AgentTurn) error
	// GetAgentTurn returns one receipt; ErrNotFound if none.
	GetAgentTurn(ctx context.Context, id string) (AgentTurn, error)
	// GetAgentTurnByKey returns identity's receipt under key; ErrNotFound
	// if none.
	GetAgentTurnByKey(ctx context.Context, identity, key string) (AgentTurn, error)
	// UpdateAgentTurn writes a receipt's mission, state and error;
	// ErrNotFound if none.
	UpdateAgentTurn(ctx context.Context, t AgentTurn) error
}

// ListAgentsParams select a page of agents.
type ListAgentsParams struct {
	PackageID string
	After     AgentCursor
	Limit     int
}

// AgentCursor is the position after which a page of agents starts: the
// last agent of the previous page.
type AgentCursor struct {
	CreatedAt int64
	ID        string
}

// MaxAgentPage is the largest page ListAgents returns.
const MaxAgentPage = 1000

// AgentPackage is an installed-index row.
type AgentPackage struct {
	PackageID  string
	Source     string // official or community
	Origin     string // the directory or git URL it came from
	Dir        string // where its tree is on this machine
	Manifest   []byte // the manifest, JSON
	Version    string
	State      string // not_installed, installing, installed, broken
	Broken     string
	ReviewedAt int64
	UpdatedAt  int64
}

// AgentOperation is a preparation operation in the journal.
type AgentOperation struct {
	ID           string
	Identity     string
	IdemKey      string
	Fingerprint  string
	PackageID    string
	Request      []byte // the PrepareRequest, JSON
	State        string
	Phase        string
	AgentID      string
	Workspace    string
	ErrorCode    string
	ErrorMessage string
	Guidance     string
	Doctor       []byte // JSON array of lines
	CreatedAt    int64
	UpdatedAt    int64
	Owner        string // the runner running it
	LeaseUntil   int64  // ms; the owner's claim ends then unless renewed
}

// AgentRecord is an agent; its row is the creation receipt of OperationID.
type AgentRecord struct {
	ID          string
	Name        string
	PackageID   string
	Engine      string
	ProjectID   string
	Workspace   string
	OperationID string
	CreatedAt   int64
}

// AgentTurn is a turn receipt.
type AgentTurn struct {
	ID           string
	Identity     string
	IdemKey      string
	Fingerprint  string
	AgentID      string
	MissionID    string
	State        string
	ErrorCode    string
	ErrorMessage string
	CreatedAt    int64
	UpdatedAt    int64
}
