package store

import (
	"context"
)

// Store is one database: embedded SQLite or PostgreSQL. Every method is safe
// for concurrent use.
type Store interface {
	Queries
	// Tx runs fn in one transaction. On SQLite it is an IMMEDIATE
	// transaction, so writers never deadlock on lock upgrades. fn's error
	// rolls the transaction back and is returned unchanged.
	Tx(ctx context.Context, fn func(q Queries) error) error
	// Migrate applies the embedded migrations under the driver's lock.
	Migrate(ctx context.Context) error
	// Dialect names the driver: "sqlite" or "postgres".
	Dialect() string
	// SupportsListenNotify reports whether notifications travel through
	// the database server (PostgreSQL LISTEN/NOTIFY) and so reach other
	// machines; SQLite's notifications (unix datagrams) reach only the
	// processes of this machine, which is all that share its file.
	SupportsListenNotify() bool
	// Doorbell returns a channel that receives a value shortly after a
	// notification on channel ch (ChannelEvents: a transaction inserted
	// events; ChannelWork: a run became claimable), from this or another
	// process (SQLite: of this machine, through the datagram bus). It is
	// closed when ctx ends. A bell only shortens waits: readers poll too, and
	// a bell that cannot listen (a socket that cannot be bound) never rings.
	Doorbell(ctx context.Context, ch string) (<-chan struct{}, error)
	// Publish sends payload on channel ch, best effort, to Doorbell and
	// Subscribe listeners of every process on this database, this one
	// included. It never waits for a listener: PostgreSQL sends NOTIFY;
	// SQLite sends a datagram to each subscriber's unix socket and drops it
	// when that subscriber's queue is full. A payload longer than
	// MaxPayload is refused with ErrTooLarge.
	Publish(ctx context.Context, ch string, payload []byte) error
	// Subscribe returns the payloads published on ch, from this and other
	// processes, until ctx ends, when the channel is closed. It returns
	// once the subscription listens, so a payload published after it
	// returns is delivered unless it is dropped: payloads are dropped,
	// never queued without bound, when the reader falls behind, and may be
	// lost while a PostgreSQL connection is re-established.
	Subscribe(ctx context.Context, ch string) (<-chan []byte, error)
	// MaxPayload is the largest payload Publish accepts, in bytes.
	MaxPayload() int
	// IsTransient reports whether err is a passing database fault (a busy
	// database, a lost connection, a server restarting) after which the
	// same operation may be retried.
	IsTransient(err error) bool
	// InsertMissionRun inserts a mission, its root run, its events in
	// order and, when a is not nil, the audit record of the creation,
	// atomically (PostgreSQL: one statement, one round trip). The run may
	// be inserted already leased (a creation handed to a local worker).
	InsertMissionRun(ctx context.Context, m Mission, r Run, a *AuditRecord, es ...Event) error
	// EndRun moves a fenced run to its final state, mirrors it on its
	// mission when mission.ID is set, and inserts e, atomically
	// (PostgreSQL: one statement). ErrFenced when the fence fails.
	EndRun(ctx context.Context, p SetRunStateParams, mission UpdateMissionStatusParams, e Event) error
	// ClaimStart claims like ClaimRun and, atomically with the claim, sets
	// a root run's mission running and inserts run.claimed
	// ({"replaySteps":n,"runId":id,"worker":workerId}); PostgreSQL: one
	// statement. It returns the run and its journal.
	ClaimStart(ctx context.Context, p ClaimRunParams) (Run, []Step, error)
	// Ping checks the connection.
	Ping(ctx context.Context) error
	// Close releases the database.
	Close() error
}

// Notification channels.
const (
	// ChannelEvents carries transient events (model.delta) between
	// processes, batched by the kernel; persisted events are not
	// announced, readers poll for them.
	ChannelEvents = "aos_events"
	// ChannelWork announces that a run became claimable (created,
	// re-queued, released); the kernel notifies it after such commits.
	ChannelWork = "aos_work"
)

// MaxEventsPerInsert is the most events Queries.InsertEvents writes in one
// statement (seven parameters each, well inside both databases' limits;
// each row count is a statement of its own in the statement cache).
const MaxEventsPerInsert = 32

// MaxStepsPerInsert is the most steps Queries.InsertSteps writes in one
// statement (seventeen parameters each).
const MaxStepsPerInsert = 32

// Queries is every query the kernel needs. Each is one statement or a small
// fixed group of statements; callers compose them inside Tx.
type Queries interface {
	OwnerAuthQueries
	ProjectQueries
	DeviceQueries
	AgentQueries
	RevealQueries

	InsertMission(ctx context.Context, m Mission) error
	GetMission(ctx context.Context, id string) (Mission, error)
	ListMissions(ctx context.Context, p ListMissionsParams) ([]Mission, error)
	UpdateMissionStatus(ctx context.Context, p UpdateMissionStatusParams) error

	InsertRun(ctx context.Context, r Run) error
	GetRun(ctx context.Context, id string) (Run, error)
	ListRunsByMission(ctx context.Context, missionID string) ([]Run, error)
	// DescendantRunIDs returns id and the ids of every run below it.
	DescendantRunIDs(ctx context.Context, id string) ([]string, error)
	// ClaimRun takes the oldest runnable run and leases it to the worker,
	// incrementing its fencing token and recording its first start
	// (started_at) if it has none. It returns ErrNotFound when none is
	// runnable.
	ClaimRun(ctx context.Context, p ClaimRunParams) (Run, error)
	// ListLeasedRuns returns the running runs whose lease has not expired
	// and whose holder ran on p.Host.
	ListLeasedRuns(ctx context.Context, p ListLeasedRunsParams) ([]Run, error)
	// TakeOverRun leases a running run to p.WorkerID before its lease
	// expires, incrementing its fencing token, only if p.Old still holds
	// it; the caller has established that p.Old's process is gone. It
	// returns ErrConflict otherwise.
	TakeOverRun(ctx context.Context, p TakeOverRunParams) (Run, error)
	// FenceRun checks that f still holds the lease, extends it to
	// leaseUntil when that is non-zero, and returns the run's cancel flag.
	// It returns ErrFenced otherwise. Inside Tx it guards every write and
	// holds the run row until commit, so no claim can take the run
	// between the check and the commit.
	FenceRun(ctx context.Context, f Fence, now, leaseUntil int64) (cancelRequested bool, err error)
	// RenewLeases extends to p.LeaseUntil, in one statement, every lease
	// in p.Held that p.Owner still holds under the same fencing token, and
	// returns those it extended with their cancel flags. A lease missing
	// from the answer is lost (taken over, or the run left running).
	RenewLeases(ctx context.Context, p RenewLeasesParams) ([]RenewedLease, error)
	// SetRunState moves a fenced run to a new status and clears its lease.
	SetRunState(ctx context.Context, p SetRunStateParams) error
	AddRunUsage(ctx context.Context, p AddUsageParams) error
	// RequestRunCancel flags a run; it returns the run's status.
	RequestRunCancel(ctx context.Context, id string, now int64) (string, error)
	// CancelIdleRun ends a run that holds no lease (queued or waiting) as
	// cancelled. It returns false if the run was not idle.
	CancelIdleRun(ctx context.Context, id string, now int64) (bool, error)
	// RequeueWaitingRun moves a waiting run back to queued.
	RequeueWaitingRun(ctx context.Context, id string, now int64) error
	// MarkRunStarted records the first time a run began executing.
	MarkRunStarted(ctx context.Context, id string, now int64) error

	ListSteps(ctx context.Context, runID string, afterSeq int, limit int) ([]Step, error)
	GetStep(ctx context.Context, runID string, seq int) (Step, error)
	// InsertStep inserts a new step row. It returns ErrConflict when a row
	// with the same (run, seq) exists.
	InsertStep(ctx context.Context, s Step) error
	// InsertSteps inserts new step rows, as InsertStep each would, in one
	// statement per MaxStepsPerInsert; ErrConflict when any of them exists.
	// Call it in a transaction (the caller rolls back on the conflict):
	// outside one, the statements before the conflicting one stay.
	InsertSteps(ctx context.Context, ss []Step) error
	// FinishStep moves a step from started or needs_reconcile to a final
	// status. It returns ErrConflict if the step is not in such a state.
	FinishStep(ctx context.Context, p FinishStepParams) error
	MarkStepNeedsReconcile(ctx context.Context, runID string, seq int) error
	// RetryStep consumes an owner's "run it" answer: it moves a
	// needs_reconcile step at p.Attempt back to started at p.Attempt+1, so
	// that a crash during that attempt is a new uncertainty. It returns
	// ErrConflict if the step is not needs_reconcile at p.Attempt.
	RetryStep(ctx context.Context, p RetryStepParams) error

	InsertWait(ctx context.Context, w Wait) error
	GetWait(ctx context.Context, id string) (Wait, error)
	// GetWaitByStep returns the wait of a step with the highest attempt.
	GetWaitByStep(ctx context.Context, runID string, seq int) (Wait, error)
	ListWaits(ctx context.Context, p ListWaitsParams) ([]Wait, error)
	// ResolveWait moves a pending wait to status; ErrConflict if it is no
	// longer pending.
	ResolveWait(ctx context.Context, p ResolveWaitParams) error
	// DueWaits lists pending waits whose resolve_by is at or before now.
	DueWaits(ctx context.Context, now int64, limit int) ([]Wait, error)

	// InsertEvent appends a persisted event and returns its row id.
	// ListEvents and LatestEventID speak in cursor positions, which
	// increase in the order events become visible, so a cursor reader never
	// skips one (on SQLite a position is the row id).
	InsertEvent(ctx context.Context, e Event) (int64, error)
	// InsertEvents appends persisted events in the order given, as
	// InsertEvent each would, in one statement per MaxEventsPerInsert.
	InsertEvents(ctx context.Context, es []Event) error
	ListEvents(ctx context.Context, p ListEventsParams) ([]Event, error)
	LatestEventID(ctx context.Context) (int64, error)

	InsertOwnerMessage(ctx context.Context, runID, text string, now int64) (int64, error)
	ListOwnerMessages(ctx context.Context, runID string, afterID int64) ([]OwnerMessage, error)

	InsertArtifact(ctx context.Context, a Artifact) error
	GetArtifact(ctx context.Context, sha256 string) (Artifact, error)
	ListArtifacts(ctx context.Context, runID string) ([]Artifact, error)

	AddSpend(ctx context.Context, day string, usd float64) error
	GetSpend(ctx context.Context, day string) (float64, error)
	AddMissionSpend(ctx context.Context, missionID string, usd float64, now int64) error

	UpsertWorker(ctx context.Context, w Worker) error
	DeleteWorker(ctx context.Context, id string) error
	ListWorkers(ctx context.Context) ([]Worker, error)

	UpsertModelPrice(ctx context.Context, p ModelPrice) error
	GetModelPrice(ctx context.Context, model string) (ModelPrice, error)
	ListModelPrices(ctx context.Context) ([]ModelPrice, error)

	// InsertPolicyRule adds a rule; ErrConflict if its id exists.
	InsertPolicyRule(ctx context.Context, r PolicyRule) error
	// ListPolicyRules returns global rules and, when projectID is set, that
	// project's, oldest first.
	ListPolicyRules(ctx context.Context, projectID string) ([]PolicyRule, error)
	// DeletePolicyRule removes a rule; ErrNotFound if there is none.
	DeletePolicyRule(ctx context.Context, id string) error

	GetSetting(ctx context.Context, key string) ([]byte, error)
	PutSetting(ctx context.Context, key string, value []byte, now int64) error

	// InsertAPIToken stores a token by its hash; ErrConflict if the id or
	// the hash exists.
	InsertAPIToken(ctx context.Context, t APIToken) error
	// GetAPITokenByHash returns the token with that hash, revoked or not;
	// ErrNotFound if there is none.
	GetAPITokenByHash(ctx context.Context, hash string) (APIToken, error)
	// ListAPITokens returns every token, oldest first.
	ListAPITokens(ctx context.Context) ([]APIToken, error)
	// RevokeAPIToken marks a token revoked; ErrNotFound if there is no such
	// live token.
	RevokeAPIToken(ctx context.Context, id string, now int64) error

	// InsertAudit appends an audit record and returns its id.
	InsertAudit(ctx context.Context, a AuditRecord) (int64, error)
	// ListAudit returns audit records with id < Before (all when 0),
	// newest first.
	ListAudit(ctx context.Context, p ListAuditParams) ([]AuditRecord, error)

	// ListCostedSteps returns the steps with a non-zero cost that ended in
	// [since, until), in no particular order: the raw material of spend by
	// model.
	ListCostedSteps(ctx context.Context, since, until int64) ([]Step, error)
	// CountMissionsByStatus returns how many missions have each status.
	CountMissionsByStatus(ctx context.Context) (map[string]int, error)
	// MetricCounts returns the figures GET /metrics reads from the
	// database at scrape time.
	MetricCounts(ctx context.Context) (MetricCounts, error)
}

// MetricCounts are totals kept in the database, read at scrape time.
type MetricCounts struct {
	// RunsByStatus counts runs by status.
	RunsByStatus map[string]int
	// Steps counts journal steps by kind and status.
	Steps []StepCount
	// ReconcileAsks counts the reconcile questions ever opened.
	ReconcileAsks int
	// SpentUSD is the spend of every mission, in USD.
	SpentUSD float64
}

// StepCount is the number of steps of one kind and status.
type StepCount struct {
	Kind, Status string
	N            int
}

// APIToken is a bearer token's record. The token itself is never stored:
// Hash is its SHA-256, hex.
type APIToken struct {
	ID        string
	Name      string
	Hash      string
	Scopes    string // space-separated: read, write
	CreatedAt int64
	RevokedAt int64 // 0 while live
}

// AuditRecord is one mutation, by whom, on what.
type AuditRecord struct {
	ID     int64
	At     int64
	Actor  string
	Action string
	Target string
	Detail []byte // JSON object, never a secret
}

// ListAuditParams pages ListAudit.
type ListAuditParams struct {
	Before int64
	Limit  int
}
