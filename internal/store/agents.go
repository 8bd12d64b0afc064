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

	// InsertAgentOperation reserves an operation; ErrConflict if its id or
	// its (identity, key) exists.
	InsertAgentOperation(ctx context.Context, o AgentOperation) error
	// GetAgentOperation returns one operation; ErrNotFound if none.
	GetAgentOperation(ctx context.Context, id string) (AgentOperation, error)
	// GetAgentOperationByKey returns identity's operation under key;
	// ErrNotFound if none.
	GetAgentOperationByKey(ctx context.Context, identity, key string) (AgentOperation, error)
	// UpdateAgentOperation writes an operation's progress (state, phase,
	// agent, workspace, error, guidance, doctor, updated_at); ErrNotFound
	// if none.
	UpdateAgentOperation(ctx context.Context, o AgentOperation) error
	// ListAgentOperationsInState returns the operations in one of states,
	// oldest first.
	ListAgentOperationsInState(ctx context.Context, states []string) ([]AgentOperation, error)

	// InsertAgent records an agent and its creation receipt; ErrConflict
	// if its id, workspace or operation has one already.
	InsertAgent(ctx context.Context, a AgentRecord) error
	// GetAgent returns one agent; ErrNotFound if none.
	GetAgent(ctx context.Context, id string) (AgentRecord, error)
	// GetAgentByOperation returns the agent an operation created;
	// ErrNotFound if none.
	GetAgentByOperation(ctx context.Context, operationID string) (AgentRecord, error)
	// ListAgents returns agents of packageID (all when ""), oldest first,
	// at most limit (all when 0).
	ListAgents(ctx context.Context, packageID string, limit int) ([]AgentRecord, error)

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
