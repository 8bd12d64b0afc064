package engine_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store/storeopen"
	"github.com/aos-run/aos/internal/worker"
)

// runChild is a worker process running the agent loop on the database in
// AOS_TEST_DSN. With AOS_TEST_KILL_TOOL=name it SIGKILLs itself right after
// the first execution of that tool (or setup step, such as worktree_add),
// before its result is committed. With AOS_TEST_KILL_RECORD=kind:name:n it
// SIGKILLs itself right after the n-th record of that step; with
// AOS_TEST_KILL_EXEC=kind:name:n, as its n-th execution begins. It exits
// when the run ends or waits.
func runChild(role string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	st, err := storeopen.Open(ctx, os.Getenv("AOS_TEST_DSN"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 2
	}
	defer st.Close()
	dir := os.Getenv("AOS_TEST_DATA")
	opts := kernel.Options{DataDir: dir, Lease: 10 * time.Second, Heartbeat: time.Second, CancelPoll: 50 * time.Millisecond, Poll: 20 * time.Millisecond}
	if name := os.Getenv("AOS_TEST_KILL_TOOL"); name != "" {
		opts.Hooks = &kernel.Hooks{AfterExec: func(runID string, seq int) {
			if s, err := st.GetStep(context.Background(), runID, seq); err == nil && (s.Kind == "tool_call" || s.Kind == "setup") && s.Name == name {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}}
	}
	if at := os.Getenv("AOS_TEST_KILL_RECORD"); at != "" {
		// SIGKILL right after the n-th record of that step (committed or
		// deferred to the run's next transaction).
		if opts.Hooks == nil {
			opts.Hooks = &kernel.Hooks{}
		}
		opts.Hooks.AfterRecord = killHook(at)
	}
	if at := os.Getenv("AOS_TEST_KILL_EXEC"); at != "" {
		// SIGKILL as the n-th execution of that step begins (after its
		// intent, if it records one).
		if opts.Hooks == nil {
			opts.Hooks = &kernel.Hooks{}
		}
		opts.Hooks.BeforeExec = killHook(at)
	}
	k := kernel.New(st, opts)
	sb, err := sandbox.New(sandbox.Config{DataDir: dir})
	if err != nil {
		return 2
	}
	deps := worker.EngineDeps(k, dir, sb, worker.AdapterFunc(os.Getenv("AOS_TEST_MODEL_URL"), fakeKeys))
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- k.RunWorker(wctx, kernel.WorkerConfig{Logics: map[string]kernel.Logic{engine.LogicName: engine.AgentLogic(deps)}, JanitorEvery: -1})
	}()
	rid := os.Getenv("AOS_TEST_RUN")
	for {
		r, err := st.GetRun(ctx, rid)
		if err == nil && (kernel.IsTerminal(r.Status) || r.Status == kernel.StatusWaiting) {
			cancel()
			<-done
			return 0
		}
		select {
		case <-ctx.Done():
			cancel()
			<-done
			return 1
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// killHook parses at, kind:name:n, into a hook that SIGKILLs the process
// the n-th time it is called for a step of that kind and name.
func killHook(at string) func(runID string, seq int, kind, name string) {
	var kind, name string
	var nth, seen int
	if parts := strings.Split(at, ":"); len(parts) == 3 {
		kind, name = parts[0], parts[1]
		nth, _ = strconv.Atoi(parts[2])
	}
	return func(_ string, _ int, k, n string) {
		if k == kind && n == name {
			if seen++; seen == nth {
				_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {}
			}
		}
	}
}
