package kernel

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// Kernel is durable execution over one store. It is safe for concurrent use.
type Kernel struct {
	st   store.Store
	opts Options

	bellMu    sync.Mutex
	eventBell chan struct{} // closed and replaced on new events; guarded by bellMu
	workBell  chan struct{} // closed and replaced when a run becomes claimable; guarded by bellMu
	workAsked bool          // a work notification is owed; guarded by bellMu
	notifying bool          // a notifier goroutine runs; guarded by bellMu

	localMu sync.Mutex
	locals  []*worker // this process's workers, for hand-offs; guarded by localMu
	// claimWait is what the workers started here take as their
	// claimWait (the const; tests lengthen it before starting one).
	claimWait time.Duration

	transient *hub
	origin    string // random, tags this kernel's transient batches
	outbox    outbox
	remote    remote
	tstats    transientCounters
}

// New returns a kernel over st, which must be migrated.
func New(st store.Store, opts Options) *Kernel {
	opts.defaults()
	k := &Kernel{st: st, opts: opts, eventBell: make(chan struct{}), workBell: make(chan struct{}), origin: newOrigin(), claimWait: claimWait}
	k.transient = newHub(&k.tstats.slow)
	return k
}

// Store returns the kernel's store.
func (k *Kernel) Store() store.Store { return k.st }

func (k *Kernel) now() int64 { return k.opts.Now().UnixMilli() }

// ring wakes this process's event listeners after a commit that inserted
// events. (Other processes hear of them through the store's doorbell.)
func (k *Kernel) ring() {
	k.bellMu.Lock()
	close(k.eventBell)
	k.eventBell = make(chan struct{})
	k.bellMu.Unlock()
}

// ringWork wakes idle workers, here and in other processes, after a commit
// that made a run claimable, and event listeners too. Step commits do not
// ring it, so they do not send idle workers claiming.
func (k *Kernel) ringWork(ctx context.Context) {
	k.ring()
	k.bellMu.Lock()
	close(k.workBell)
	k.workBell = make(chan struct{})
	k.bellMu.Unlock()
	k.notifyWork(ctx)
}

// notifyWork tells other processes' idle workers that a run became
// claimable, off the caller's path and coalesced: one notifier goroutine at
// a time publishes on aos_work, and every call made while it publishes is
// covered by one more publication. A burst of creations thus costs a
// couple of NOTIFYs, not one each inside every caller's latency. A lost
// notification costs a poll (Options.Poll).
func (k *Kernel) notifyWork(ctx context.Context) {
	k.bellMu.Lock()
	k.workAsked = true
	if k.notifying {
		k.bellMu.Unlock()
		return
	}
	k.notifying = true
	k.bellMu.Unlock()
	ctx = context.WithoutCancel(ctx)
	go func() {
		for {
			k.bellMu.Lock()
			if !k.workAsked {
				k.notifying = false
				k.bellMu.Unlock()
				return
			}
			k.workAsked = false
			k.bellMu.Unlock()
			if err := k.st.Publish(ctx, store.ChannelWork, nil); err != nil {
				k.opts.Logger.Warn("notify workers failed; they will poll", "err", err.Error())
			}
		}
	}()
}

func (k *Kernel) eventBellChan() <-chan struct{} {
	k.bellMu.Lock()
	defer k.bellMu.Unlock()
	return k.eventBell
}

func (k *Kernel) workBellChan() <-chan struct{} {
	k.bellMu.Lock()
	defer k.bellMu.Unlock()
	return k.workBell
}

// validUUID reports whether s is a UUID as newID writes them.
func validUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range s {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// newID returns a random UUID v4.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// tx runs fn in a transaction, retrying passing database faults with
// backoff until ctx ends. fn must be safe to run again from the top. The
// events fn inserts are written together when it returns (batchedEvents).
func (k *Kernel) tx(ctx context.Context, fn func(q store.Queries) error) error {
	return k.retry(ctx, func() error {
		return k.st.Tx(ctx, func(q store.Queries) error {
			b := &batchedEvents{Queries: q}
			if err := fn(b); err != nil {
				return err
			}
			return q.InsertEvents(ctx, b.events)
		})
	})
}

// batchedEvents are a kernel transaction's queries: the events it inserts
// wait, in order, and are written by one statement when the transaction's
// function returns, before it commits (the kernel's transactions record
// two to six events each: one round trip each on PostgreSQL before). No
// kernel transaction reads its own events back, and none inserts events
// through another query, so their order, and their order against the
// transaction's other rows' events, is the order of the InsertEvent calls.
// InsertEvent answers 0 for the id: the kernel uses none.
type batchedEvents struct {
	store.Queries
	events []store.Event
}

func (q *batchedEvents) InsertEvent(_ context.Context, e store.Event) (int64, error) {
	q.events = append(q.events, e)
	return 0, nil
}

func (k *Kernel) retry(ctx context.Context, fn func() error) error {
	backoff := 25 * time.Millisecond
	for {
		err := fn()
		if err == nil || !k.st.IsTransient(err) {
			return err
		}
		k.opts.Logger.Warn("database fault; retrying", "err", err.Error(), "backoff", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (gave up: %v)", err, context.Cause(ctx))
		case <-t.C:
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

func jsonOrEmpty(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage("{}"), nil
	}
	if raw, ok := v.(json.RawMessage); ok {
		if !json.Valid(raw) {
			return nil, &Error{Code: CodeInvalidInput, Seq: -1, Msg: "not valid JSON"}
		}
		return CanonicalJSON(raw)
	}
	b, err := CanonicalJSON(v)
	if err != nil {
		return nil, &Error{Code: CodeInvalidInput, Seq: -1, Msg: err.Error()}
	}
	return b, nil
}

func (k *Kernel) event(ctx context.Context, q store.Queries, missionID, runID string, seq *int, kind string, payload any) error {
	b, err := CanonicalJSON(payload)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", kind, err)
	}
	_, err = q.InsertEvent(ctx, store.Event{MissionID: missionID, RunID: runID, Seq: seq, Kind: kind, Payload: b, CreatedAt: k.now()})
	return err
}

// stepEvent inserts a step event (step.started, step.completed,
// step.failed) of step s whose body (its request, result or error) is
// canonical JSON.
func (k *Kernel) stepEvent(ctx context.Context, q store.Queries, missionID, runID string, seq int, kind string, s store.Step, bodyKey string, body []byte) error {
	b, err := stepEventJSON(s, bodyKey, body)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", kind, err)
	}
	_, err = q.InsertEvent(ctx, store.Event{MissionID: missionID, RunID: runID, Seq: &seq, Kind: kind, Payload: b, CreatedAt: k.now()})
	return err
}

// MissionSpec creates a mission and its root run.
type MissionSpec struct {
	// ID, when set, is the mission's id: a UUID the caller derived from
	// its own idempotency key, so that a repeated creation finds the
	// mission instead of making a second one. Empty: a new random id.
	ID        string
	ProjectID string
	Title     string
	// Spec is stored on the mission as given (objective, criteria, …).
	Spec any
	// Logic names the registered logic that runs the root run.
	Logic string
	// Input is the root run's input.
	Input  any
	Budget Budget
	// Audit, when set, is the creation's audit record, written in the
	// same transaction as the mission; its Target is set to the mission's
	// id.
	Audit *store.AuditRecord
}

// CreateMission creates a mission and its root run, queued; or, when a
// worker of this kernel has a free slot for its logic, already claimed by
// that worker and handed to it in memory (handoff.go).
func (k *Kernel) CreateMission(ctx context.Context, s MissionSpec) (missionID, rootRunID string, err error) {
	if s.Logic == "" {
		return "", "", &Error{Code: CodeInvalidInput, Seq: -1, Msg: "mission needs a logic"}
	}
	if err := validBudget(s.Budget); err != nil {
		return "", "", err
	}
	spec, err := jsonOrEmpty(s.Spec)
	if err != nil {
		return "", "", err
	}
	input, err := jsonOrEmpty(s.Input)
	if err != nil {
		return "", "", err
	}
	missionID, rootRunID = newID(), newID()
	if s.ID != "" {
		if !validUUID(s.ID) {
			return "", "", &Error{Code: CodeInvalidInput, Seq: -1, Msg: "a mission id must be a UUID"}
		}
		missionID = s.ID
	}
	now := k.now()
	payload, err := CanonicalJSON(map[string]any{"missionId": missionID, "rootRunId": rootRunID, "title": s.Title})
	if err != nil {
		return "", "", fmt.Errorf("create mission: encode event: %w", err)
	}
	m := store.Mission{ID: missionID, ProjectID: s.ProjectID, Title: s.Title, Spec: spec, Status: StatusQueued, RootRunID: rootRunID, CreatedAt: now, UpdatedAt: now}
	e := store.Event{MissionID: missionID, RunID: rootRunID, Kind: "mission.created", Payload: payload, CreatedAt: now}
	var audit *store.AuditRecord
	if s.Audit != nil {
		a := *s.Audit
		a.Target = missionID
		audit = &a
	}
	run := k.newRun(rootRunID, missionID, "", s.Logic, input, s.Budget, now)
	if w := k.reserveLocal(s.Logic, missionID); w != nil {
		// Created claimed by a local worker (handoff.go): one commit.
		run = w.claimedRun(run, now)
		m.Status = StatusRunning
		claimed, err := CanonicalJSON(map[string]any{"runId": rootRunID, "worker": w.cfg.ID, "replaySteps": 0})
		if err != nil {
			w.unreserve()
			return "", "", fmt.Errorf("create mission: encode event: %w", err)
		}
		c := store.Event{MissionID: missionID, RunID: rootRunID, Kind: "run.claimed", Payload: claimed, CreatedAt: now}
		err = k.retry(ctx, func() error { return k.st.InsertMissionRun(ctx, m, run, audit, e, c) })
		if err != nil {
			w.unreserve()
			return "", "", fmt.Errorf("create mission: %w", err)
		}
		k.ring()
		w.handOff(run)
		return missionID, rootRunID, nil
	}
	err = k.retry(ctx, func() error { return k.st.InsertMissionRun(ctx, m, run, audit, e) })
	if err != nil {
		return "", "", fmt.Errorf("create mission: %w", err)
	}
	k.ringWork(ctx)
	return missionID, rootRunID, nil
}

func validBudget(b Budget) error {
	if b.USD < 0 || b.Turns < 0 || b.WallSec < 0 {
		return &Error{Code: CodeInvalidInput, Seq: -1, Msg: "budgets must not be negative"}
	}
	return nil
}

func (k *Kernel) newRun(id, missionID, parent, logic string, input json.RawMessage, b Budget, now int64) store.Run {
	return store.Run{ID: id, MissionID: missionID, ParentRunID: parent, Logic: logic, Input: input, Status: StatusQueued,
		BudgetUSD: b.USD, BudgetTurns: b.Turns, BudgetWallSec: b.WallSec, CreatedAt: now, UpdatedAt: now}
}

// RunSpec creates a child run.
type RunSpec struct {
	Logic  string
	Input  any
	Budget Budget
}

// CreateRun creates a queued child run of parentRunID, in its mission.
func (k *Kernel) CreateRun(ctx context.Context, parentRunID string, s RunSpec) (string, error) {
	if s.Logic == "" {
		return "", &Error{Code: CodeInvalidInput, Seq: -1, Msg: "run needs a logic"}
	}
	if err := validBudget(s.Budget); err != nil {
		return "", err
	}
	input, err := jsonOrEmpty(s.Input)
	if err != nil {
		return "", err
	}
	id := newID()
	err = k.tx(ctx, func(q store.Queries) error {
		parent, err := q.GetRun(ctx, parentRunID)
		if errors.Is(err, store.ErrNotFound) {
			return &Error{Code: CodeNotFound, RunID: parentRunID, Seq: -1, Msg: "no such parent run"}
		}
		if err != nil {
			return err
		}
		now := k.now()
		if err := q.InsertRun(ctx, k.newRun(id, parent.MissionID, parent.ID, s.Logic, input, s.Budget, now)); err != nil {
			return err
		}
		return k.event(ctx, q, parent.MissionID, id, nil, "run.created", map[string]any{"runId": id, "parentRunId": parent.ID})
	})
	if err != nil {
		return "", fmt.Errorf("create run: %w", err)
	}
	k.ringWork(ctx)
	return id, nil
}

// GetRun returns a run.
func (k *Kernel) GetRun(ctx context.Context, id string) (store.Run, error) {
	r, err := k.st.GetRun(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return r, &Error{Code: CodeNotFound, RunID: id, Seq: -1, Msg: "no such run"}
	}
	return r, err
}

// GetMission returns a mission.
func (k *Kernel) GetMission(ctx context.Context, id string) (store.Mission, error) {
	m, err := k.st.GetMission(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return m, &Error{Code: CodeNotFound, Seq: -1, Msg: "no such mission " + id}
	}
	return m, err
}

// mirror sets the mission's status to the root run's.
func (k *Kernel) mirror(ctx context.Context, q store.Queries, run store.Run, status string, result json.RawMessage, endedAt int64) error {
	if run.ParentRunID != "" {
		return nil
	}
	return q.UpdateMissionStatus(ctx, store.UpdateMissionStatusParams{ID: run.MissionID, Status: status, Result: result, EndedAt: endedAt, Now: k.now()})
}
