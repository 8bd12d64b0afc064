package store

import "encoding/json"

// Times are Unix milliseconds throughout the store. JSON columns are stored
// as text, byte for byte, so a transcript read back is identical to the one
// written (PostgreSQL's jsonb would reorder keys).

// Mission is one objective run to an end. Its status mirrors its root run's.
type Mission struct {
	ID        string
	ProjectID string
	Title     string
	Spec      json.RawMessage // the creation input, opaque to the store
	Status    string
	RootRunID string
	SpentUSD  float64
	Result    json.RawMessage // nil until ended
	CreatedAt int64
	UpdatedAt int64
	EndedAt   int64 // 0 until ended
}

// ListMissionsParams filters ListMissions. Empty fields do not filter.
type ListMissionsParams struct {
	Status    string
	ProjectID string
	Limit     int
}

// UpdateMissionStatusParams sets a mission's status, and its result when it
// ended.
type UpdateMissionStatusParams struct {
	ID      string
	Status  string
	Result  json.RawMessage
	EndedAt int64
	Now     int64
}

// Run is one execution of a run logic under the kernel.
type Run struct {
	ID              string
	MissionID       string
	ParentRunID     string // "" for a root run
	Logic           string // the registered logic's name
	Input           json.RawMessage
	Status          string
	LeaseOwner      string
	LeaseExpiresAt  int64
	FencingToken    int64
	WakeAt          int64
	CancelRequested bool
	BudgetUSD       float64 // 0 means no limit
	BudgetTurns     int
	BudgetWallSec   int64
	Usage           json.RawMessage // kernel-defined usage totals
	SpentUSD        float64
	Turns           int
	Result          json.RawMessage
	Error           string
	CreatedAt       int64
	UpdatedAt       int64
	StartedAt       int64
	EndedAt         int64
	// Holder is the process that holds (or last held) the lease.
	Holder LeaseHolder
}

// LeaseHolder identifies the process holding a run's lease, so that a
// worker on the same machine can tell whether it is still alive.
type LeaseHolder struct {
	Host string // hostname, for people
	PID  int
	// Proc identifies the process beyond its pid on its machine (the
	// kernel's: boot id, pid namespace, start time); "" when unknown.
	Proc string
}

// ClaimRunParams selects and leases a run.
type ClaimRunParams struct {
	WorkerID   string
	Holder     LeaseHolder
	Now        int64
	LeaseUntil int64
	// Logics limits the claim to runs of these logics; empty means any.
	Logics []string
	// MissionID, when set, limits the claim to that mission's runs.
	MissionID string
}

// ListLeasedRunsParams selects runs whose lease is live and held by a
// process on Host.
type ListLeasedRunsParams struct {
	Host      string
	Now       int64
	Logics    []string // empty: any
	MissionID string   // "": any
}

// TakeOverRunParams moves a live lease from a holder that died to WorkerID,
// only if the lease is still Old's (compare-and-set on owner and token).
type TakeOverRunParams struct {
	Old        Fence
	WorkerID   string
	Holder     LeaseHolder
	Now        int64
	LeaseUntil int64
}

// Fence identifies a lease: the run, its holder and the token it was
// claimed under.
type Fence struct {
	RunID string
	Owner string
	Token int64
}

// RenewLeasesParams are a worker's leases to extend in one heartbeat.
type RenewLeasesParams struct {
	Owner      string
	Held       []LeaseRef
	LeaseUntil int64
}

// LeaseRef is a lease a worker believes it holds: a run and the fencing
// token it was claimed under.
type LeaseRef struct {
	RunID string
	Token int64
}

// RenewedLease is a lease RenewLeases extended, with the run's cancel flag.
type RenewedLease struct {
	RunID           string
	Token           int64
	CancelRequested bool
}

// SetRunStateParams moves a fenced run to Status, clearing the lease.
type SetRunStateParams struct {
	Fence   Fence
	Status  string
	WakeAt  int64 // for a queued run that sleeps
	Result  json.RawMessage
	Error   string
	EndedAt int64
	Now     int64
}

// AddUsageParams adds a step's usage to its run.
type AddUsageParams struct {
	RunID   string
	Usage   json.RawMessage // the run's new usage totals
	USD     float64
	Turns   int
	NextSeq int
	Now     int64
}

// Step is one journaled interaction of a run with the outside world.
type Step struct {
	RunID       string
	Seq         int
	Kind        string
	Name        string
	Effect      string
	RequestHash string
	Request     json.RawMessage
	Status      string // started | completed | failed | needs_reconcile
	IdemKey     string
	Result      json.RawMessage
	Error       json.RawMessage
	Usage       json.RawMessage
	CostUSD     float64
	WakeAt      int64
	StartedAt   int64
	EndedAt     int64
	// Attempt counts the execution attempts owners authorized by answering
	// a reconcile question "run it" (RetryStep); 0 for the first execution.
	Attempt int
}

// RetryStepParams consumes an owner's "run it": a needs_reconcile step at
// Attempt becomes started at Attempt+1.
type RetryStepParams struct {
	RunID   string
	Seq     int
	Attempt int
	Now     int64
}

// FinishStepParams records a step's outcome.
type FinishStepParams struct {
	RunID   string
	Seq     int
	Status  string // completed | failed
	Result  json.RawMessage
	Error   json.RawMessage
	Usage   json.RawMessage
	CostUSD float64
	Now     int64
}

// Wait is a durable wait for the owner (approval, question) or a timer.
type Wait struct {
	ID         string
	RunID      string
	MissionID  string
	StepSeq    int
	Kind       string
	Payload    json.RawMessage
	Status     string // pending | resolved | expired | cancelled
	Resolution json.RawMessage
	Actor      string
	ResolveBy  int64 // 0 means no expiry
	CreatedAt  int64
	ResolvedAt int64
	// Attempt is the step attempt a reconcile question is about; a step
	// has at most one wait per attempt.
	Attempt int
}

// ListWaitsParams filters ListWaits.
type ListWaitsParams struct {
	Status    string
	MissionID string
	RunID     string
	Limit     int
}

// ResolveWaitParams ends a pending wait.
type ResolveWaitParams struct {
	ID         string
	Status     string
	Resolution json.RawMessage
	Actor      string
	Now        int64
}

// Event is a persisted timeline event.
type Event struct {
	ID        int64
	MissionID string
	RunID     string
	Seq       *int // the step it belongs to, if any
	Kind      string
	Payload   json.RawMessage
	Trust     string
	CreatedAt int64
}

// ListEventsParams reads events after a cursor.
type ListEventsParams struct {
	After     int64
	MissionID string
	Limit     int
}

// OwnerMessage is a steering message from the owner to a run.
type OwnerMessage struct {
	ID        int64
	RunID     string
	Text      string
	CreatedAt int64
}

// Artifact is a content-addressed blob's metadata; the bytes are files.
type Artifact struct {
	SHA256    string
	Name      string
	Mime      string
	Size      int64
	RunID     string
	StepSeq   int
	CreatedAt int64
}

// Worker is a worker process's heartbeat row.
type Worker struct {
	ID        string
	Version   string
	Hostname  string
	StartedAt int64
	LastSeen  int64
}

// ModelPrice is a model's price per million tokens, in USD.
type ModelPrice struct {
	Model             string
	Provider          string
	InputPerMTok      float64
	OutputPerMTok     float64
	CacheReadPerMTok  float64
	CacheWritePerMTok float64
	ContextWindow     int
	UpdatedAt         int64
}

// PolicyRule is an owner's standing decision for a tool (and, for shell, a
// command prefix), for one project or, with ProjectID "", for all.
type PolicyRule struct {
	ID            string
	ProjectID     string
	Tool          string
	CommandPrefix string
	Decision      string // allow | ask | deny
	Note          string
	CreatedAt     int64
}
