package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

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
			cfg, _, err := env(os.Stderr)
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
		Short: "Run aos on this machine: its processes as supervised children, on the embedded database in AOS_DATA_DIR",
		Long: "up runs `aos worker` as a child process on the embedded SQLite database in AOS_DATA_DIR (or on\n" +
			"AOS_DATABASE_URL), restarts it with backoff if it crashes, and stops it cleanly on Ctrl-C.\n" +
			"The HTTP server joins it as a second child when it lands.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, _, err := env(os.Stderr)
			if err != nil {
				return err
			}
			where := cfg.DataDir
			if cfg.DatabaseURL != "" {
				where = "PostgreSQL (AOS_DATABASE_URL)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "aos %s up on %s; Ctrl-C to stop\n", version, where)
			ctx, stop := signalContext(cmd.Context())
			defer stop()
			superviseAll(ctx, cmd.OutOrStdout(), map[string][]string{"worker": {"worker"}})
			return nil
		},
	}
}

// runWorker runs a worker until SIGINT/SIGTERM.
func runWorker(cmd *cobra.Command, version string) error {
	cfg, log, err := env(os.Stderr)
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
			cfg, log, err := env(os.Stderr)
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
