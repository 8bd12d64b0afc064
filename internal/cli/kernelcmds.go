package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/hoststate"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/worker"
)

func newMigrateCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "migrate",
		Short: "Apply the database migrations (SQLite in AOS_DATA_DIR, or AOS_DATABASE_URL)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := env(cmd.Context(), os.Stderr)
			if err != nil {
				return err
			}
			st, err := worker.Open(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			defer st.Close()
			fmt.Fprintf(cmd.OutOrStdout(), "database (%s) is migrated\n", st.Dialect())
			return nil
		},
	}
}

func newWorkerCmd(version string) *cobra.Command {
	return &cobra.Command{
		Use:   "worker",
		Short: "Claim and execute runs until interrupted; Ctrl-C hands runs over to another worker",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runWorker(cmd, version) },
	}
}

func newUpCmd(version string) *cobra.Command {
	return &cobra.Command{
		Use:   "up",
		Short: "Run aos on this machine: `aos server` and `aos worker` as supervised children, on the embedded database in AOS_DATA_DIR",
		Long: "up runs `aos server` and `aos worker` as two child processes on the embedded SQLite database in\n" +
			"AOS_DATA_DIR (or on AOS_DATABASE_URL), restarts a crashed child with backoff, and stops both cleanly\n" +
			"on Ctrl-C. The API listens on AOS_ADDR (127.0.0.1:8640). On first run it prints a setup token: create the\n" +
			"owner account with `aos setup --server URL`; afterwards log in with `aos login --server URL`.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := env(cmd.Context(), os.Stderr)
			if err != nil {
				return err
			}
			where := cfg.DataDir
			if cfg.DatabaseURL != "" {
				where = "PostgreSQL (AOS_DATABASE_URL)"
			}
			addr := cfg.Getenv("AOS_ADDR")
			if addr == "" {
				addr = "127.0.0.1:8640"
			}
			if _, err := serverTLS(cfg.Getenv); err != nil {
				return err // before starting a server child that would fail the same way
			}
			url := scheme(cfg.Getenv) + "://" + addr
			// One aos up per data dir, checked before anything is minted or
			// started: a second one would invalidate the live setup token.
			lock, err := acquireUpLock(cfg.DataDir, url)
			if err != nil {
				return err
			}
			defer lock.Close()
			hs, lease, err := claimDevice(cmd.Context(), cfg.DataDir, url)
			if err != nil {
				return err
			}
			defer func() { _ = hoststate.ReleaseDevice(context.WithoutCancel(cmd.Context()), hs, lease.Token) }()
			if err := checkListen(addr); err != nil {
				return err
			}
			if err := os.MkdirAll(cfg.WorkspaceRoot, 0o755); err != nil {
				return fmt.Errorf("aos up: create the workspace root %s: %w", cfg.WorkspaceRoot, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s on %s; API at %s/api/v1; Ctrl-C to stop\n", banner("aos up", version), where, url)
			fmt.Fprintf(cmd.OutOrStdout(), "projects live under %s (AOS_WORKSPACE_ROOT)\n", cfg.WorkspaceRoot)
			fmt.Fprintf(cmd.OutOrStdout(), "console at %s/\n", url)
			fmt.Fprintf(cmd.OutOrStdout(), "metrics at %s/metrics (from this machine, or with a read token)\n", url)
			if cfg.MetricsAddr != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "worker metrics at http://%s/metrics (AOS_METRICS_ADDR, from this machine)\n", cfg.MetricsAddr)
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			ctx, stopGuard := hoststate.Guard(ctx, hs, lease.Token, upLeaseDuration, time.Now)
			defer stopGuard()
			if err := upSetupToken(ctx, cmd.OutOrStdout(), cfg, addr); err != nil {
				return err
			}
			superviseAll(ctx, cmd.OutOrStdout(), map[string][]string{"server": {"server", "--no-setup-token", "--control"}, "worker": {"worker"}})
			if cause := context.Cause(ctx); errors.Is(cause, hoststate.ErrLeaseLost) {
				return fmt.Errorf("aos up stopped its work: %w", cause)
			}
			return nil
		},
	}
}

// upSetupToken issues and prints the first-run setup token before aos up
// starts its children (the server child is told not to issue another).
func upSetupToken(ctx context.Context, out io.Writer, cfg config.Config, addr string) error {
	st, err := worker.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	a, err := newAuth(cfg, st, slog.New(slog.DiscardHandler), publicOrigin(cfg.Getenv, addr))
	if err != nil {
		return err
	}
	return printSetupToken(ctx, out, a, "cli:up", scheme(cfg.Getenv)+"://"+addr)
}

// runWorker runs a worker until SIGINT/SIGTERM.
func runWorker(cmd *cobra.Command, version string) error {
	cfg, log, err := env(cmd.Context(), os.Stderr)
	if err != nil {
		return err
	}
	ctx, stop := signalContext(cmd.Context())
	defer stop()
	return worker.Run(ctx, cfg, log, version)
}

func newSelfTestCmd(version string) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "selftest",
		Short: "Run a short mission through the real kernel and database, and print its timeline",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, log, err := env(cmd.Context(), os.Stderr)
			if err != nil {
				return err
			}
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			st, err := worker.Open(ctx, cfg)
			if err != nil {
				return err
			}
			defer st.Close()
			k := kernel.New(st, kernel.Options{DataDir: cfg.DataDir, Logger: log, Version: version, Poll: 100 * time.Millisecond})
			cursor, err := st.LatestEventID(ctx)
			if err != nil {
				return err
			}
			mid, rid, err := k.CreateMission(ctx, kernel.MissionSpec{Title: "kernel self-test", Logic: worker.SelfTestLogic})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "mission %s on %s\n", mid, st.Dialect())
			wctx, wcancel := context.WithCancel(ctx)
			defer wcancel()
			go func() {
				_ = k.RunWorker(wctx, kernel.WorkerConfig{Concurrency: 1, Logics: worker.Logics(), MissionID: mid, JanitorEvery: -1})
			}()
			errDone := errors.New("done")
			err = k.ListenEvents(ctx, cursor, mid, func(e store.Event) error {
				fmt.Fprintf(out, "  #%-5d %-18s %s\n", e.ID, e.Kind, summarize(e.Payload))
				if e.Kind == "run.completed" {
					return errDone
				}
				return nil
			})
			if !errors.Is(err, errDone) {
				return fmt.Errorf("selftest: %w", err)
			}
			r, err := k.GetRun(ctx, rid)
			if err != nil {
				return err
			}
			if r.Status != kernel.StatusDone {
				return fmt.Errorf("selftest: run ended %s: %s", r.Status, r.Error)
			}
			var res kernel.Result
			_ = json.Unmarshal(r.Result, &res)
			fmt.Fprintf(out, "selftest passed: %s\n", res.Summary)
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "give up after this long")
	return cmd
}

// summarize shortens an event payload for one terminal line.
func summarize(p []byte) string {
	const max = 100
	if len(p) > max {
		return string(p[:max]) + "…"
	}
	return string(p)
}
