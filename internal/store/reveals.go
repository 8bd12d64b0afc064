package store

import "context"

// RevealQueries are the queries of console reveals: seed 000's "Desktop
// reveal after preparation" mapped onto the owner's console. A reveal is
// pending until acknowledged; nothing here expires rows.
type RevealQueries interface {
	// InsertAgentReveal records operation r.OperationID's pending reveal of
	// r.AgentID. It is idempotent: when the operation has a reveal already
	// (pending or acknowledged) nothing changes and it returns nil.
	InsertAgentReveal(ctx context.Context, r AgentReveal) error
	// ListPendingAgentReveals returns the reveals not yet acknowledged,
	// oldest first, at most limit (all when 0).
	ListPendingAgentReveals(ctx context.Context, limit int) ([]AgentReveal, error)
	// AckAgentReveal records that operationID's reveal of agentID was
	// shown, at at, unless it was acknowledged before (the first time is
	// kept). It returns the reveal as stored; ErrNotFound when the
	// operation has no reveal of agentID.
	AckAgentReveal(ctx context.Context, operationID, agentID string, at int64) (AgentReveal, error)
}

// AgentReveal is an operation's reveal of the agent it created; OpenedAt
// is 0 while it is pending.
type AgentReveal struct {
	OperationID string
	AgentID     string
	CreatedAt   int64
	OpenedAt    int64
	// AgentName and PackageID are the agent's, read with the reveal (empty
	// when no agent row matches); InsertAgentReveal ignores them.
	AgentName string
	PackageID string
}
