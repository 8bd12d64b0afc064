package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/hoststate"
	"github.com/aos-run/aos/internal/integrate"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/termtext"
	"github.com/aos-run/aos/internal/worker"
)

// newIntegrateCmd returns `aos integrate add|run|status|retry|skip`: the
// ordered integration of verified change sets onto a target branch
// (internal/integrate), on this machine's data dir.
func newIntegrateCmd() *cobra.Command {
	var repoDir, target string
	var asJSON bool
	cmd := &cobra.Command{Use: "integrate", Short: "Integrate verified change sets onto a target branch, in order (add, run, status, retry, skip)"}
	cmd.PersistentFlags().StringVar(&repoDir, "repo", "", "the project's repository (default: the current directory)")
	cmd.PersistentFlags().StringVar(&target, "target", "aos/integration", "the branch change sets land on (never one that is checked out)")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print the queue as JSON")
	with := func(cmd *cobra.Command, fn func(ctx context.Context, in *integrate.Integrator) (integrate.Queue, error)) error {
		ctx := cmd.Context()
		q, err := withIntegrator(ctx, repoDir, target, fn)
		if err != nil {
			var ie *integrate.Error
			if errors.As(err, &ie) {
				switch ie.Code {
				case integrate.CodeNotFound:
					return &exitError{code: exitNotFound, msg: err.Error()}
				case integrate.CodeInvalid, integrate.CodeCheckedOut, integrate.CodeState:
					return &exitError{code: exitUsage, msg: err.Error()}
				}
			}
			return err
		}
		if err := printQueue(cmd.OutOrStdout(), q, asJSON); err != nil {
			return err
		}
		for _, it := range q.Items {
			if it.State == integrate.StateBlocked {
				return &exitError{code: exitUnfinished, msg: fmt.Sprintf("integration of %s is blocked at item %d (%s)", q.Target, it.Ordinal, it.Blocker.Code)}
			}
		}
		return nil
	}
	add := &cobra.Command{Use: "add CHANGESET...", Short: "Queue change sets (their SHA-256, as a mission's changeset.recorded event names it), in order",
		Args: cobra.MinimumNArgs(1), RunE: func(cmd *cobra.Command, args []string) error {
			return with(cmd, func(ctx context.Context, in *integrate.Integrator) (integrate.Queue, error) {
				return in.Enqueue(ctx, args...)
			})
		}}
	run := &cobra.Command{Use: "run", Short: "Integrate the queue in order until it is done or an item blocks (exit 7)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return with(cmd, func(ctx context.Context, in *integrate.Integrator) (integrate.Queue, error) { return in.Run(ctx) })
		}}
	status := &cobra.Command{Use: "status", Short: "Show the queue and each attempt's record", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return with(cmd, func(ctx context.Context, in *integrate.Integrator) (integrate.Queue, error) { return in.Status(ctx) })
		}}
	resolve := func(name, short string, fn func(in *integrate.Integrator) func(context.Context, int) (integrate.Queue, error)) *cobra.Command {
		return &cobra.Command{Use: name + " ITEM", Short: short, Args: cobra.ExactArgs(1), RunE: func(cmd *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil || n < 1 {
				return usage("ITEM is the item's number, as aos integrate status shows it")
			}
			return with(cmd, func(ctx context.Context, in *integrate.Integrator) (integrate.Queue, error) { return fn(in)(ctx, n) })
		}}
	}
	cmd.AddCommand(add, run, status,
		resolve("retry", "Put a blocked item back in the queue (a moved target's current commit is adopted)", func(in *integrate.Integrator) func(context.Context, int) (integrate.Queue, error) {
			return in.Retry
		}),
		resolve("skip", "Take a blocked item out of the queue for good, so the next one can go", func(in *integrate.Integrator) func(context.Context, int) (integrate.Queue, error) {
			return in.Skip
		}))
	return cmd
}

// withIntegrator opens the data dir's store (for the change sets, kernel
// artifacts), the integration records and the project, and runs fn.
func withIntegrator(ctx context.Context, repoDir, target string, fn func(context.Context, *integrate.Integrator) (integrate.Queue, error)) (integrate.Queue, error) {
	cfg, _, err := env(ctx, io.Discard)
	if err != nil {
		return integrate.Queue{}, err
	}
	if repoDir == "" {
		if repoDir, err = os.Getwd(); err != nil {
			return integrate.Queue{}, err
		}
	}
	top, err := gitx.CheckProject(ctx, repoDir)
	if err != nil {
		return integrate.Queue{}, err
	}
	repo, err := gitx.Open(ctx, top)
	if err != nil {
		return integrate.Queue{}, err
	}
	st, err := worker.Open(ctx, cfg)
	if err != nil {
		return integrate.Queue{}, err
	}
	defer st.Close()
	k := kernel.New(st, kernel.Options{DataDir: cfg.DataDir})
	state, err := hoststate.Open(hostStateDir(cfg.DataDir), "integrations", hoststate.Hooks{})
	if err != nil {
		return integrate.Queue{}, err
	}
	in, err := integrate.New(integrate.Options{Repo: repo, Target: target, State: state, Load: func(ctx context.Context, sha string) ([]byte, error) {
		f, _, err := k.OpenArtifact(ctx, sha)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return io.ReadAll(io.LimitReader(f, 8<<20))
	}})
	if err != nil {
		return integrate.Queue{}, err
	}
	return fn(ctx, in)
}

// printQueue prints q: one line per item, its blocker and its last
// attempt's fingerprints.
func printQueue(w io.Writer, q integrate.Queue, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(q)
	}
	fmt.Fprintf(w, "integration of %s onto %s (at %s)\n", termtext.Line(q.Repo), termtext.Line(q.Target), shortSHA(q.Tip))
	if len(q.Items) == 0 {
		fmt.Fprintln(w, "  the queue is empty")
	}
	for _, it := range q.Items {
		fmt.Fprintf(w, "  %d  %-11s change set %s  mission %s\n", it.Ordinal, it.State, shortSHA(it.ChangeSet), termtext.Line(it.MissionID))
		if n := len(it.Attempts); n > 0 {
			a := it.Attempts[n-1]
			fmt.Fprintf(w, "     attempt %d: before %s (expected %s) → %s %s\n", a.N, shortSHA(a.ObservedBefore), shortSHA(a.ExpectedBefore), a.Outcome, shortSHA(a.After))
		}
		if b := it.Blocker; b != nil {
			fmt.Fprintf(w, "     blocked: %s: %s\n", b.Code, termtext.Line(b.Message))
			if len(b.Files) > 0 {
				fmt.Fprintf(w, "     files: %s\n", termtext.Line(strings.Join(b.Files, ", ")))
			}
			fmt.Fprintf(w, "     %s\n", b.Recovery)
		}
	}
	if q.Dropped > 0 {
		fmt.Fprintf(w, "  (%d older finished items dropped by retention)\n", q.Dropped)
	}
	return nil
}

func shortSHA(s string) string {
	if s == "" {
		return "-"
	}
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
