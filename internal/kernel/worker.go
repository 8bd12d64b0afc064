package kernel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// WorkerConfig configures RunWorker.
type WorkerConfig struct {
	// ID identifies the worker in leases and the workers table
	// (hostname-pid by default).
	ID string
	// Concurrency is how many runs execute at once (4 by default).
	Concurrency int
	// Logics maps a run's logic name to its code. Only runs of these
	// logics are claimed.
	Logics map[string]Logic
	// MissionID, when set, limits the worker to that mission's runs
	// (aos run claims only its own mission).
	MissionID string
	// Hostname is recorded with the worker's leases and in the workers
	// table: os.Hostname() by default. A worker checks whether a lease's
	// holder is alive only when it ran on a host of the same name (and the
	// same boot and pid namespace); set it when hostnames are not unique
	// and their processes must not be compared.
	Hostname string
	// JanitorEvery is how often this worker expires due waits: 30 s by
	// default, negative to disable.
	JanitorEvery time.Duration
}

// RunWorker claims and executes runs until ctx ends. On shutdown it stops
// claiming, interrupts its runs and releases their leases, so that another
// worker resumes them at once; it never marks them failed.
func (k *Kernel) RunWorker(ctx context.Context, cfg WorkerConfig) error {
	if len(cfg.Logics) == 0 {
		return &Error{Code: CodeInvalidInput, Seq: -1, Msg: "worker needs at least one logic"}
	}
	host := cfg.Hostname
	if host == "" {
		host, _ = os.Hostname()
	}
	if cfg.ID == "" {
		cfg.ID = fmt.Sprintf("%s-%d", host, os.Getpid())
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.JanitorEvery == 0 {
		cfg.JanitorEvery = 30 * time.Second
	}
	logics := make([]string, 0, len(cfg.Logics))
	for name := range cfg.Logics {
		logics = append(logics, name)
	}
	w := &worker{k: k, cfg: cfg, logics: logics, holder: selfHolder(host), active: map[string]*runCtx{}, held: map[string]*heldLease{},
		slots: make(chan struct{}, cfg.Concurrency), freed: make(chan struct{}, 1), claimWait: k.claimWait}
	started := k.now()
	beat := func() {
		err := k.st.UpsertWorker(context.WithoutCancel(ctx), store.Worker{ID: cfg.ID, Version: k.opts.Version, Hostname: host, StartedAt: started, LastSeen: k.now()})
		if err != nil {
			k.opts.Logger.Warn("worker heartbeat failed", "worker", cfg.ID, "err", err.Error())
		}
	}
	beat()
	k.opts.Logger.Info("worker started", "worker", cfg.ID, "concurrency", cfg.Concurrency, "dialect", k.st.Dialect())

	k.addLocal(w)
	bg, stopBg := context.WithCancel(ctx)
	var bgWG sync.WaitGroup
	bgWG.Add(1)
	go func() {
		defer bgWG.Done()
		w.background(bg, beat)
	}()

	err := w.loop(ctx)

	// Shutdown: take no more hand-offs, interrupt runs, which release
	// their leases. A hand-off reserved before closing registers its run
	// later and sees closing (execute).
	k.removeLocal(w)
	w.mu.Lock()
	w.closing = true
	for _, rc := range w.active {
		rc.cancel(newErr(CodeShutdown, "", -1, "worker shutting down"))
	}
	w.mu.Unlock()
	w.wg.Wait()
	stopBg()
	bgWG.Wait()
	_ = k.st.DeleteWorker(context.WithoutCancel(ctx), cfg.ID)
	k.opts.Logger.Info("worker stopped", "worker", cfg.ID)
	return err
}

type worker struct {
	k      *Kernel
	cfg    WorkerConfig
	logics []string
	holder store.LeaseHolder // this process, recorded with its leases
	wg     sync.WaitGroup
	// slots holds one token per executing run (Concurrency of them): the
	// claim loop and hand-offs from CreateMission (handoff.go) take them.
	slots chan struct{}
	// freed gets a token when a slot is given back (freeSlot), so that the
	// claim loop, waiting for one, tries again.
	freed chan struct{}
	// claimWait bounds a hand-off's wait for the claim loop's attempt
	// (claimWait; tests set it).
	claimWait time.Duration

	mu      sync.Mutex
	active  map[string]*runCtx    // run id → its execution; guarded by mu
	held    map[string]*heldLease // leases the lease loop renews; guarded by mu
	closing bool                  // shutting down: no hand-offs; guarded by mu
	attempt chan struct{}         // closed when the claim loop's current attempt ends; nil when none; guarded by mu
}

func (w *worker) background(ctx context.Context, beat func()) {
	hb := time.NewTicker(workerRowEvery)
	defer hb.Stop()
	lt := time.NewTicker(w.k.leaseTick())
	defer lt.Stop()
	var jan <-chan time.Time
	if w.cfg.JanitorEvery > 0 {
		t := time.NewTicker(w.cfg.JanitorEvery)
		defer t.Stop()
		jan = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hb.C:
			beat()
		case <-lt.C:
			w.renew(ctx)
		case <-jan:
			if _, err := w.k.ExpireWaits(ctx); err != nil && ctx.Err() == nil {
				w.k.opts.Logger.Warn("janitor failed", "err", err.Error())
			}
		}
	}
}

func (w *worker) loop(ctx context.Context) error {
	door, err := w.k.st.Doorbell(ctx, store.ChannelWork)
	if err != nil {
		return fmt.Errorf("worker: doorbell: %w", err)
	}
	for {
		claimed, ok := w.slotForClaim(ctx)
		if !ok {
			return nil
		}
		bell := w.k.workBellChan()
		now := w.k.now()
		run, steps, err := w.claim(ctx, now)
		started := err == nil
		if errors.Is(err, store.ErrNotFound) {
			run, err = w.takeOverDead(ctx)
		}
		if err == nil {
			claimed()
			w.wg.Add(1)
			go func() {
				release := w.slotRelease()
				defer w.wg.Done()
				defer release()
				w.execute(run, steps, started, release)
			}()
			continue
		}
		<-w.slots
		claimed()
		if ctx.Err() != nil {
			return nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			w.k.opts.Logger.Warn("claim failed", "err", err.Error())
		}
		t := time.NewTimer(w.k.opts.Poll)
		select {
		case <-ctx.Done():
		case <-bell:
		case <-door:
		case <-t.C:
		}
		t.Stop()
	}
}

// claim takes the oldest runnable run and starts it with one atomic write
// (store.ClaimStart: the claim, which records the run's first start, the
// mission's status and run.claimed), and returns its journal. It returns
// store.ErrNotFound when nothing is runnable.
func (w *worker) claim(ctx context.Context, now int64) (store.Run, []store.Step, error) {
	run, steps, err := w.k.st.ClaimStart(ctx, store.ClaimRunParams{WorkerID: w.cfg.ID, Holder: w.holder, Now: now, LeaseUntil: now + w.k.opts.Lease.Milliseconds(),
		Logics: w.logics, MissionID: w.cfg.MissionID})
	if err == nil && run.StartedAt == now {
		// The claim recorded the first start: report the run as it was
		// (never started), which observeClaim counts as a first claim.
		run.StartedAt = 0
	}
	return run, steps, err
}

// execute runs one claimed run to its end, suspension or interruption.
// started says that claim already loaded its journal and recorded its
// start; a run taken over from a dead holder has neither.
//
// release frees the run's slot: execute calls it once the run's end is
// committed, before the end is announced, so that whoever waited for that
// end and creates the next mission at once finds the slot free (a
// hand-off). The caller calls it too, once execute returns.
func (w *worker) execute(run store.Run, steps []store.Step, started bool, release func()) {
	k := w.k
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	log := k.opts.Logger.With("run", run.ID, "mission", run.MissionID, "token", run.FencingToken)
	fence := store.Fence{RunID: run.ID, Owner: w.cfg.ID, Token: run.FencingToken}
	rc := &runCtx{k: k, ctx: ctx, cancel: cancel, run: run, fence: fence, recorded: map[int]store.Step{}, lastRec: -1, release: release}
	w.mu.Lock()
	w.active[run.ID] = rc
	w.held[run.ID] = &heldLease{rc: rc, until: run.LeaseExpiresAt}
	if w.closing {
		// A hand-off that arrived after shutdown interrupted the others.
		rc.cancel(newErr(CodeShutdown, "", -1, "worker shutting down"))
	}
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		// A later execution of the same run (re-claimed after this one
		// suspended) may have registered itself already: leave it.
		if w.active[run.ID] == rc {
			delete(w.active, run.ID)
		}
		w.mu.Unlock()
		w.unhold(rc)
	}()

	now := k.now()
	if !started {
		if err := w.start(ctx, rc, now); err != nil {
			log.Warn("start run failed", "err", err.Error())
			return // the lease expires and another claim retries
		}
		steps = rc.loaded
	}
	for _, s := range steps {
		rc.recorded[s.Seq] = s
		rc.lastRec = max(rc.lastRec, s.Seq)
	}
	if rc.run.StartedAt == 0 {
		rc.run.StartedAt = now
	}
	k.ring()
	log.Info("run claimed", "replay_steps", len(steps))
	k.observeClaim(run, now)

	res, lerr := callLogic(w.cfg.Logics[run.Logic], rc)
	w.unhold(rc)
	cancelWatch := context.Cause(ctx)
	cancel(errWatchDone)
	w.finalize(rc, res, lerr, cancelWatch, log)
}

// start loads the journal of a run taken over from a dead holder and
// records its start.
func (w *worker) start(ctx context.Context, rc *runCtx, now int64) error {
	k, run, fence := w.k, rc.run, rc.fence
	var steps []store.Step
	err := k.retry(ctx, func() (err error) { steps, err = k.st.ListSteps(ctx, run.ID, -1, 0); return err })
	if err != nil {
		return fmt.Errorf("load journal: %w", err)
	}
	rc.loaded = steps
	return k.tx(ctx, func(q store.Queries) error {
		if _, err := q.FenceRun(ctx, fence, now, 0); err != nil {
			return err
		}
		if err := q.MarkRunStarted(ctx, run.ID, now); err != nil {
			return err
		}
		if err := k.mirror(ctx, q, run, StatusRunning, nil, 0); err != nil {
			return err
		}
		return k.event(ctx, q, run.MissionID, run.ID, nil, "run.claimed", map[string]any{"runId": run.ID, "worker": rc.fence.Owner, "replaySteps": len(steps)})
	})
}

// endRun records a run's end, its mission's mirror and run.completed with
// store.EndRun.
func (k *Kernel) endRun(ctx context.Context, rc *runCtx, status string, body []byte, errMsg, summary string, now int64) error {
	payload, err := CanonicalJSON(map[string]any{"runId": rc.run.ID, "status": status, "summary": summary})
	if err != nil {
		return fmt.Errorf("encode run.completed: %w", err)
	}
	var mission store.UpdateMissionStatusParams
	if rc.run.ParentRunID == "" {
		mission = store.UpdateMissionStatusParams{ID: rc.run.MissionID, Status: status, Result: body, EndedAt: now, Now: now}
	}
	e := store.Event{MissionID: rc.run.MissionID, RunID: rc.run.ID, Kind: "run.completed", Payload: payload, CreatedAt: now}
	p := store.SetRunStateParams{Fence: rc.fence, Status: status, Result: body, Error: errMsg, EndedAt: now, Now: now}
	return k.retry(ctx, func() error { return k.st.EndRun(ctx, p, mission, e) })
}

var errWatchDone = errors.New("kernel: run logic returned")

func callLogic(l Logic, rc *runCtx) (res Result, err error) {
	if l == nil {
		return Result{}, fmt.Errorf("kernel: no logic registered as %q", rc.run.Logic)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("kernel: run logic panicked: %v", p)
		}
	}()
	return l(rc)
}

// finalize records how the run ended, or releases it.
func (w *worker) finalize(rc *runCtx, res Result, err error, cause error, log interface {
	Info(string, ...any)
	Warn(string, ...any)
}) {
	k := w.k
	ctx, cancel := context.WithTimeout(context.Background(), k.opts.Lease)
	defer cancel()
	switch {
	case IsSuspend(err):
		log.Info("run suspended")
		return
	case errors.Is(cause, ErrLeaseLost) || errors.Is(err, ErrLeaseLost):
		log.Warn("lease lost; leaving the run to its new holder")
		k.observeLeaseLost(rc.run)
		return
	case errors.Is(cause, ErrShutdown):
		now := k.now()
		rerr := rc.tx(ctx, func(q store.Queries) error {
			if err := q.SetRunState(ctx, store.SetRunStateParams{Fence: rc.fence, Status: StatusQueued, Now: now}); err != nil {
				return err
			}
			if err := k.mirror(ctx, q, rc.run, StatusQueued, nil, 0); err != nil {
				return err
			}
			return k.event(ctx, q, rc.run.MissionID, rc.run.ID, nil, "run.released", map[string]any{"runId": rc.run.ID, "worker": w.cfg.ID})
		})
		if rerr != nil {
			log.Warn("release failed; the lease will expire", "err", rerr.Error())
			return
		}
		k.ringWork(ctx)
		log.Info("run released for another worker")
		return
	}
	status, errMsg := res.Status, ""
	switch {
	case errors.Is(cause, ErrCancelled) || errors.Is(err, ErrCancelled):
		status, errMsg = StatusCancelled, ""
	case errors.Is(err, ErrBudgetExhausted):
		status, errMsg = StatusBudgetExhausted, err.Error()
	case err != nil:
		status, errMsg = StatusFailed, err.Error()
	case !IsTerminal(status):
		status, errMsg = StatusFailed, fmt.Sprintf("run logic returned non-terminal status %q", res.Status)
	}
	if status == StatusCancelled || err != nil {
		res = Result{Status: status, Summary: errMsg}
	}
	res.Status = status
	body, _ := json.Marshal(res)
	now := k.now()
	var ferr error
	if rc.hasPending() {
		ferr = rc.tx(ctx, func(q store.Queries) error {
			if err := q.SetRunState(ctx, store.SetRunStateParams{Fence: rc.fence, Status: status, Result: body, Error: errMsg, EndedAt: now, Now: now}); err != nil {
				return err
			}
			if err := k.mirror(ctx, q, rc.run, status, body, now); err != nil {
				return err
			}
			return k.event(ctx, q, rc.run.MissionID, rc.run.ID, nil, "run.completed", map[string]any{"runId": rc.run.ID, "status": status, "summary": res.Summary})
		})
	} else {
		// Nothing pending: one statement on PostgreSQL.
		ferr = k.endRun(ctx, rc, status, body, errMsg, res.Summary, now)
	}
	if ferr != nil {
		log.Warn("record run end failed", "err", ferr.Error())
		return
	}
	rc.release()
	k.ring()
	log.Info("run ended", "status", status)
}
