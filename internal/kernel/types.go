package kernel

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"
)

// Effect classifies what executing a step does to the world, which decides
// what happens to a step found started (no result) after a crash.
type Effect string

// Effects.
const (
	// EffectPure computes; re-executing is harmless.
	EffectPure Effect = "pure"
	// EffectRead reads the world; re-executing is harmless.
	EffectRead Effect = "read"
	// EffectModelCall calls a model: re-executed, and counted as a turn.
	EffectModelCall Effect = "model_call"
	// EffectIdempotentWrite writes, keyed by the step's idempotency key, so
	// that a second execution with the same key changes nothing.
	EffectIdempotentWrite Effect = "idempotent_write"
	// EffectNonIdempotent may not be repeated: after a crash it is
	// reconciled by its probe, or asked of the owner.
	EffectNonIdempotent Effect = "non_idempotent"
)

func (e Effect) valid() bool {
	switch e {
	case EffectPure, EffectRead, EffectModelCall, EffectIdempotentWrite, EffectNonIdempotent:
		return true
	}
	return false
}

// Run and mission statuses.
const (
	StatusQueued          = "queued"
	StatusRunning         = "running"
	StatusWaiting         = "waiting"
	StatusDone            = "done"
	StatusPartial         = "partial"
	StatusBlocked         = "blocked"
	StatusFailed          = "failed"
	StatusBudgetExhausted = "budget_exhausted"
	StatusCancelled       = "cancelled"
)

// IsTerminal reports whether status ends a run.
func IsTerminal(status string) bool {
	switch status {
	case StatusDone, StatusPartial, StatusBlocked, StatusFailed, StatusBudgetExhausted, StatusCancelled:
		return true
	}
	return false
}

// Reconcile probe answers.
type ReconcileAnswer int

// Probe answers for a non_idempotent step found started after a crash.
const (
	// ReconcileUnknown: the probe cannot tell; the owner is asked.
	ReconcileUnknown ReconcileAnswer = iota
	// ReconcileDone: the effect happened; Result is recorded.
	ReconcileDone
	// ReconcileNotDone: the effect did not happen; the step executes.
	ReconcileNotDone
)

// ReconcileOutcome is what a probe found.
type ReconcileOutcome struct {
	Answer ReconcileAnswer
	Result any
	// Note, for an unknown answer, says what the probe found; the owner's
	// question shows it.
	Note string
}

// StepSpec describes one step.
type StepSpec struct {
	Kind   string
	Name   string
	Effect Effect
	// Request is hashed as canonical JSON; replay must ask the same.
	Request any
	// Reconcile says whether the effect of an interrupted execution
	// happened. A step with a probe records its intent (like an announced
	// step) and, found started after a crash, is probed before anything
	// else, whatever its effect: done records the probe's result (an
	// idempotent_write that already happened is not run again, so its
	// result is the first execution's, not a no-op's).
	Reconcile func(ctx context.Context, request json.RawMessage, idemKey string) (ReconcileOutcome, error)
	// Subject describes the step to the owner in a reconcile question:
	// which tool, its exact input and a one-line summary. Optional.
	Subject *Subject
	// AssumedResult is recorded when the owner answers that an interrupted
	// step ran. Nil records null.
	AssumedResult any
	// Announce records the step's start durably (an intent row and a
	// persisted step.started event) for a step a timeline shows while it
	// runs. non_idempotent steps always record their intent, which is
	// what makes an interruption detectable; other steps skip it unless
	// announced, since re-executing them after a crash is harmless, and so
	// cost one transaction instead of two.
	Announce bool
	// LiveAnnounce announces the step's start to live watchers only,
	// for a step that records no intent (Announce unset): as it starts,
	// the kernel emits transient copies of the run's step events since its
	// last live announce (those committed meanwhile and those of records
	// still pending, pending.go), then a transient step.started with the
	// payload an intent's would carry. A timeline shows the step running,
	// after what came before it, without a commit. Pending records commit
	// with the run's next transaction, except that a model call's result
	// or a wait's or timer's outcome commits first, before the step runs.
	// The agent loop's model call uses it (issue 17: one commit per turn).
	LiveAnnounce bool
}

func (s StepSpec) needsIntent() bool {
	return s.Effect == EffectNonIdempotent || s.Announce || s.Reconcile != nil
}

// Subject is what a reconcile question shows of its step.
type Subject struct {
	// Tool names what the step runs (a tool's name).
	Tool string `json:"tool"`
	// Input is the step's exact input (for example a shell command's
	// JSON input).
	Input json.RawMessage `json:"input,omitempty"`
	// Summary is one line a person reads: "shell: echo hi >> log.txt".
	Summary string `json:"summary,omitempty"`
}

// Outcome is what a step's exec returns.
type Outcome struct {
	Result any
	Usage  Usage
}

// ExecFunc executes a step. idemKey is stable across re-executions of the
// same step; ctx is cancelled on cancel, shutdown or a lost lease.
type ExecFunc func(ctx context.Context, idemKey string) (Outcome, error)

// Usage is what steps consumed.
type Usage struct {
	InputTokens      int64   `json:"inputTokens"`
	OutputTokens     int64   `json:"outputTokens"`
	CacheReadTokens  int64   `json:"cacheReadTokens"`
	CacheWriteTokens int64   `json:"cacheWriteTokens"`
	CostUSD          float64 `json:"costUsd"`
	Turns            int     `json:"turns"`
}

func (u Usage) isZero() bool { return u == Usage{} }

func (u Usage) add(o Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
		CostUSD:          u.CostUSD + o.CostUSD,
		Turns:            u.Turns + o.Turns,
	}
}

// Budget is a run's limits; zero means unlimited.
type Budget struct {
	USD     float64 `json:"usd"`
	Turns   int     `json:"turns"`
	WallSec int64   `json:"wallSec"`
}

// BudgetLeft is what remains of a run's budget. A field is +Inf (USD) or -1
// (Turns, WallSec) when that budget is unlimited.
type BudgetLeft struct {
	USD     float64 `json:"usd"`
	Turns   int     `json:"turns"`
	WallSec int64   `json:"wallSec"`
	// Fraction is the largest used share among the limited budgets, 0..1+.
	Fraction float64 `json:"fraction"`
}

// Result is what run logic returns: the envelope stored on the run.
type Result struct {
	Status  string          `json:"status"`
	Summary string          `json:"summary,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// Logic is a run logic: a deterministic function of its step results.
type Logic func(rc RunContext) (Result, error)

// WaitKind is what a durable wait waits for.
type WaitKind string

// Wait kinds.
const (
	WaitApproval WaitKind = "approval"
	WaitQuestion WaitKind = "question"
)

// WaitOutcome is how a wait ended.
type WaitOutcome struct {
	// Status is resolved or expired.
	Status     string          `json:"status"`
	Resolution json.RawMessage `json:"resolution,omitempty"`
	Actor      string          `json:"actor,omitempty"`
}

// Expired reports whether the wait timed out.
func (w WaitOutcome) Expired() bool { return w.Status == "expired" }

// OwnerMessage is a steering message, as journaled for the run.
type OwnerMessage struct {
	ID   int64  `json:"id"`
	Text string `json:"text"`
}

// Hooks are optional callbacks at step boundaries, for chaos tests. They are
// nil in production. For an owner-authorized re-run ("run it"),
// BeforeIntent and AfterIntent surround the transaction that consumes the
// answer and starts the new attempt.
type Hooks struct {
	BeforeIntent func(runID string, seq int)
	AfterIntent  func(runID string, seq int)
	AfterExec    func(runID string, seq int)
	AfterCommit  func(runID string, seq int)
	// AfterRecord is called once a step's result is recorded: committed,
	// or deferred to the run's next transaction (see pending.go). Internal
	// steps (owner_messages, emit, now, uuid) are reported too, with kind
	// and name, so a crash test can kill the process where a removed
	// commit used to be.
	AfterRecord func(runID string, seq int, kind, name string)
	// BeforeExec is called right before a step's exec runs (after its
	// intent, if it records one), with its kind and name, so a crash test
	// can kill the process while a step without an intent row runs.
	BeforeExec func(runID string, seq int, kind, name string)
}

// Options configure a Kernel.
type Options struct {
	// DataDir holds artifacts (artifacts/<sha[0:2]>/<sha>).
	DataDir string
	// Lease is how long a claim or a renewal holds a run (6 s): a worker
	// that dies leaves its runs to others within Lease plus an idle
	// worker's Poll.
	Lease time.Duration
	// Heartbeat is how often a worker renews all its leases, in one
	// statement (1 s).
	Heartbeat time.Duration
	// CancelPoll bounds how long a running run takes to see a cancel
	// (1 s): the lease renewal reads the cancel flags, and runs every
	// min(Heartbeat, CancelPoll).
	CancelPoll time.Duration
	// Poll is how often an idle worker looks for work it was not woken for
	// (a timer come due, a lost notification): 1 s.
	Poll time.Duration
	// EventPoll is how often ListenEvents looks for events committed by
	// other processes (50 ms); events of this process wake it at once.
	EventPoll time.Duration
	// Now is the clock; time.Now by default.
	Now func() time.Time
	// Logger receives structured logs; never prompts, outputs or secrets.
	Logger *slog.Logger
	// Hooks, nil in production.
	Hooks *Hooks
	// Observer sees claims and lost leases (metrics); nil means none.
	Observer Observer
	// Version is reported in the workers table.
	Version string
	// CommitEveryStep writes every step's record in its own transaction,
	// as the kernel did before issue 17, instead of deferring re-executable
	// results to the run's next transaction. Off by default; benchmarks
	// turn it on to measure both commit structures in one run.
	CommitEveryStep bool
	// QueueEveryRun makes CreateMission always queue the root run for a
	// worker's claim, instead of creating it claimed by a local worker with
	// a free slot and handing it over in memory (handoff.go). Off by
	// default; benchmarks turn it on to measure both paths in one run.
	QueueEveryRun bool
	// LocalTransientOnly keeps transient events (model.delta) in this
	// process: EmitTransient does not publish them through the store and
	// SubscribeTransient does not receive other processes'. For a process
	// that is alone on its database and wants no sockets or LISTEN
	// connection; off by default, since aos up runs server and worker as
	// two processes.
	LocalTransientOnly bool
}

func (o *Options) defaults() {
	if o.Lease <= 0 {
		o.Lease = 6 * time.Second
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = time.Second
	}
	if o.CancelPoll <= 0 {
		o.CancelPoll = time.Second
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.EventPoll <= 0 {
		o.EventPoll = 50 * time.Millisecond
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
}
