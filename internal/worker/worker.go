// Package worker assembles an aos worker process: it opens and migrates the
// store, seeds model prices, registers the run logics and runs the kernel's
// worker loop with its janitor and heartbeat.
package worker

import (
	"context"
	"errors"
	"fmt"
	"github.com/aos-run/aos/internal/backend"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/metrics"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storeopen"
)

// Open opens and migrates the configured store.
func Open(ctx context.Context, cfg config.Config) (store.Store, error) {
	st, err := storeopen.Open(ctx, storeopen.DSN(cfg.DatabaseURL, cfg.DataDir))
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	return st, nil
}

// SeedPrices writes the model catalogue's prices into model_prices.
func SeedPrices(ctx context.Context, st store.Store, nowMillis int64) error {
	for _, m := range provider.Catalogue() {
		err := st.UpsertModelPrice(ctx, store.ModelPrice{Model: m.ID, Provider: string(m.Provider), InputPerMTok: m.Price.Input,
			OutputPerMTok: m.Price.Output, CacheReadPerMTok: m.Price.CacheRead, CacheWritePerMTok: m.Price.CacheWrite,
			ContextWindow: int(m.ContextWindow), UpdatedAt: nowMillis})
		if err != nil {
			return fmt.Errorf("seed prices: %w", err)
		}
	}
	return nil
}

// Logics returns the run logics this binary registers.
func Logics() map[string]kernel.Logic {
	return map[string]kernel.Logic{SelfTestLogic: SelfTest}
}

// Run runs a worker until ctx ends, then hands its runs over. At start it
// runs the sandbox's canary probe: a failure is logged with its fix, and
// the shell then refuses every command (it fails closed) while the rest of
// the agent keeps working. Every environment variable is read through
// cfg.Getenv.
func Run(ctx context.Context, cfg config.Config, log *slog.Logger, version string) error {
	st, err := Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	m := metrics.New(metrics.ProcessWorker, version)
	k := kernel.New(st, kernel.Options{DataDir: cfg.DataDir, Logger: log, Version: version, Observer: m})
	if err := SeedPrices(ctx, st, time.Now().UnixMilli()); err != nil {
		return err
	}
	sb, err := sandbox.New(sandbox.ConfigFromEnv(cfg.Getenv, cfg.DataDir))
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	if rep, err := sb.Probe(ctx); err != nil || !rep.OK() {
		msg := "sandbox probe failed; shell commands will be refused"
		if err != nil {
			log.Error(msg, "err", err.Error())
		} else {
			log.Error(msg, "failed_checks", rep.Failed())
		}
	} else {
		log.Info("sandbox probe passed")
	}
	logics := Logics()
	adapters := Adapters(AdapterOptions{Getenv: cfg.Getenv, LocalSetting: LocalSetting(st), Observer: m})
	logics[engine.LogicName] = engine.AgentLogic(EngineDeps(k, cfg.DataDir, ObserveCommands(sb, m), adapters))
	if cfg.MetricsAddr != "" {
		ln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			return fmt.Errorf("metrics: listen on %s (AOS_METRICS_ADDR): %w", cfg.MetricsAddr, err)
		}
		log.Info("metrics served", "addr", ln.Addr().String(), "path", "/metrics")
		go serveMetrics(ctx, ln, m, log)
	}
	sweepCtx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() { defer close(swept); SweepWorktrees(sweepCtx, st, engine.DefaultWorktreeRoot(cfg.DataDir), log) }()
	defer func() { stopSweep(); <-swept }()
	SweepTmp(os.TempDir(), time.Now(), log)
	logics[backend.LogicName] = backend.Logic(BackendDeps(k, cfg.DataDir, cfg.WorkspaceRoot, sb, cfg.Getenv))
	return k.RunWorker(ctx, kernel.WorkerConfig{ID: cfg.WorkerID, Concurrency: cfg.MaxConcurrentRuns, Logics: logics})
}

// serveMetrics serves m on GET /metrics to loopback peers until ctx ends.
func serveMetrics(ctx context.Context, ln net.Listener, m *metrics.Metrics, log *slog.Logger) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics.LocalOnly(m.Handler()))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Warn("metrics server stopped", "err", err.Error())
	}
}
