// Package worker assembles an aos worker process: it opens and migrates the
// store, seeds model prices, registers the run logics and runs the kernel's
// worker loop with its janitor and heartbeat.
package worker

import (
	"context"
	"fmt"
	"github.com/aos-run/aos/internal/backend"
	"log/slog"
	"time"

	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
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
// the agent keeps working.
func Run(ctx context.Context, cfg config.Config, log *slog.Logger, version string) error {
	st, err := Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	k := kernel.New(st, kernel.Options{DataDir: cfg.DataDir, Logger: log, Version: version})
	if err := SeedPrices(ctx, st, time.Now().UnixMilli()); err != nil {
		return err
	}
	sb, err := sandbox.New(sandbox.ConfigFromEnv(cfg.DataDir))
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
	logics[engine.LogicName] = engine.AgentLogic(EngineDeps(k, cfg.DataDir, sb, AdapterFunc("", nil)))
	logics[backend.LogicName] = backend.Logic(BackendDeps(k, cfg.DataDir, sb, nil))
	return k.RunWorker(ctx, kernel.WorkerConfig{ID: cfg.WorkerID, Concurrency: cfg.MaxConcurrentRuns, Logics: logics})
}
