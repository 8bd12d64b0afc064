package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/hostconfig"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/termtext"
	"github.com/aos-run/aos/internal/worker"
)

// exitError carries a process exit code with its one-line reason.
type exitError struct {
	code exitCode
	msg  string
}

// Error is the one-line reason printed on exit.
func (e *exitError) Error() string { return e.msg }

// ExitCode is the process exit code.
func (e *exitError) ExitCode() int { return int(e.code) }

// session runs one mission in this process: a kernel over the configured
// database, a worker that claims only that mission, and the terminal
// timeline. Every rule (validation, the model check, the daily cap,
// confinement, the audit) is the mission service's: the session creates,
// resolves and cancels through it.
type session struct {
	cfg     config.Config
	log     *slog.Logger
	st      store.Store
	k       *kernel.Kernel
	version string
	getenv  func(string) string
	adapter func(string) (provider.Adapter, error)
	svc     *mission.Service // built on first use, with adapter
	out     io.Writer
	json    bool
	onAsk   string // wait | deny
	tty     bool
	label   string // shown before the timeline (the demo's "scripted model")
}

func openSession(ctx context.Context, version string, out io.Writer) (*session, error) {
	cfg, _, err := env(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	// The timeline owns the terminal: logs go to stderr at warn and above.
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	st, err := worker.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := worker.SeedPrices(ctx, st, time.Now().UnixMilli()); err != nil {
		st.Close()
		return nil, err
	}
	s := newSession(cfg, st, log, version, out, cfg.Getenv)
	s.tty = isTTY(os.Stdin)
	return s, nil
}

// newSession returns a session over st; getenv is read for the model
// adapters' keys and base URLs.
func newSession(cfg config.Config, st store.Store, log *slog.Logger, version string, out io.Writer, getenv func(string) string) *session {
	k := kernel.New(st, kernel.Options{DataDir: cfg.DataDir, Logger: log, Version: version, Poll: 200 * time.Millisecond})
	adapter := worker.Adapters(worker.AdapterOptions{Getenv: getenv, LocalSetting: worker.LocalSetting(st)})
	return &session{cfg: cfg, log: log, st: st, k: k, version: version, getenv: getenv, adapter: adapter, out: out, onAsk: "wait"}
}

// service returns the mission service of the session, built on first use
// so that it checks models with the session's adapter.
func (s *session) service() *mission.Service {
	if s.svc == nil {
		// The project's configuration files (.aos/config.yaml and the
		// user's), as the server reads them: a registry that is not
		// started reads each project's once, when a mission asks.
		var hc *hostconfig.Registry
		if p, err := hostconfig.UserPath(s.getenv); err == nil {
			hc = hostconfig.NewRegistry(p, s.log)
		}
		s.svc = mission.New(s.k, mission.Options{WorkspaceRoot: s.cfg.WorkspaceRoot, Version: s.version, Getenv: s.getenv, Logger: s.log,
			Adapter: s.adapter, HostConfig: hc})
	}
	return s.svc
}

func (s *session) close() { _ = s.st.Close() }

// drive runs the mission's worker and its timeline until the mission ends.
// The first Ctrl-C cancels the mission; a second leaves it resumable.
func (s *session) drive(ctx context.Context, missionID string) error {
	if s.json {
		// JSON Lines: the mission id first, so a script can resume the
		// mission after a crash; the result envelope last.
		line, _ := json.Marshal(map[string]string{"missionId": missionID})
		fmt.Fprintf(s.out, "%s\n", line)
	}
	sb, err := sandbox.New(sandbox.ConfigFromEnv(s.getenv, s.cfg.DataDir))
	if err != nil {
		return err
	}
	deps := worker.EngineDeps(s.k, s.cfg.DataDir, sb, s.adapter)
	deps.Local = true // every mission of this session runs here, at this terminal
	logics := worker.Logics()
	logics[engine.LogicName] = engine.AgentLogic(deps)
	logics[engine.LocalLogicName] = logics[engine.LogicName] // aos run's own missions
	logics[backend.LogicName] = backend.Logic(worker.BackendDeps(s.k, s.cfg.DataDir, s.cfg.WorkspaceRoot, sb, s.getenv))
	logics[backend.LocalLogicName] = logics[backend.LogicName] // aos run --engine

	worker.SweepTmp(os.TempDir(), time.Now(), s.log)
	wctx, stopWorker := context.WithCancel(context.Background())
	workerDone := make(chan error, 1)
	go func() {
		workerDone <- s.k.RunWorker(wctx, kernel.WorkerConfig{Concurrency: 2, Logics: logics, MissionID: missionID, JanitorEvery: 5 * time.Second})
	}()
	// After the worker stops: a mission cancelled while idle never ran its
	// removal step; its worktree goes now (its branch stays).
	defer func() {
		_, _ = engine.SweepWorktrees(context.WithoutCancel(ctx), engine.DefaultWorktreeRoot(s.cfg.DataDir), worker.MissionLookup(s.st))
	}()
	defer func() { stopWorker(); <-workerDone }()

	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sig)
	tl := newTimeline(s, missionID)
	tctx, stopTimeline := context.WithCancel(ctx)
	defer stopTimeline()
	tlDone := make(chan error, 1)
	go func() { tlDone <- tl.run(tctx) }()

	// The first Ctrl-C cancels the mission after a short grace, during
	// which a second Ctrl-C stops aos instead and leaves the mission
	// resumable (its lease is released at once by the worker's shutdown).
	var grace <-chan time.Time
	for {
		select {
		case err := <-tlDone:
			if errors.Is(err, errMissionEnded) {
				return s.finish(ctx, missionID)
			}
			return err
		case <-grace:
			grace = nil
			if _, err := s.service().CancelMission(context.WithoutCancel(ctx), localActor(), missionID); err != nil {
				return missionError(err)
			}
		case <-sig:
			if grace != nil {
				fmt.Fprintf(s.out, "\nstopped; the mission is resumable: aos resume %s\n", missionID)
				return &exitError{code: exitCancelled, msg: "interrupted; mission left resumable"}
			}
			fmt.Fprintf(s.out, "\ncancelling the mission in %s… (Ctrl-C again to stop aos and leave it resumable instead)\n", cancelGrace)
			grace = time.After(cancelGrace)
		}
	}
}

// cancelGrace is how long a first Ctrl-C waits for a second before the
// mission is cancelled.
const cancelGrace = 2 * time.Second

// finish prints the result and turns the status into the exit code.
func (s *session) finish(ctx context.Context, missionID string) error {
	m, err := s.service().GetMission(ctx, missionID)
	if err != nil {
		return missionError(err)
	}
	if s.json {
		fmt.Fprintf(s.out, "%s\n", termtext.JSON(m.Result))
	}
	if code := statusExit(m.Status); code != exitOK {
		return &exitError{code: code, msg: "mission " + missionID + " ended " + m.Status}
	}
	return nil
}
