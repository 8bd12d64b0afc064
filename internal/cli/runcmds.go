package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/provider/script"
	"github.com/aos-run/aos/internal/worker"
)

// DefaultModel is the model aos run uses without --model.
const DefaultModel = "claude-opus-5-5"

type runFlags struct {
	project   string
	model     string
	effort    string
	criteria  []string
	budgetUSD float64
	maxTurns  int
	wallSec   int64
	network   string
	onAsk     string
	json      bool
	dirty     bool // --include-uncommitted
	engine    string
	verify    []string
	allow     []string
}

func newRunCmd(version string) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] \"objective\"",
		Short: "Run one mission in this process and stream its timeline; exit 0 done, 6 partial, 7 blocked/failed/budget, 130 cancelled",
		Args:  objectiveArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch f.onAsk {
			case "wait", "deny":
			default:
				return &exitError{code: exitUsage, msg: "--on-ask must be wait or deny"}
			}
			s, err := openSession(cmd.Context(), version, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			defer s.close()
			s.json, s.onAsk = f.json, f.onAsk
			mid, err := s.create(cmd.Context(), f, args[0])
			if err != nil {
				return err
			}
			return s.drive(cmd.Context(), mid)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.project, "project", ".", "the project's directory: the top level of a git repository")
	fl.StringVar(&f.model, "model", DefaultModel, "model id")
	fl.StringVar(&f.effort, "effort", "", "low, medium, high, xhigh or max (the provider's default when empty)")
	fl.StringArrayVar(&f.criteria, "criterion", nil, "a done criterion (repeatable); none asks the agent to propose them")
	fl.Float64Var(&f.budgetUSD, "budget-usd", 5, "USD budget of the mission (0: no limit)")
	fl.IntVar(&f.maxTurns, "max-turns", 100, "model turns at most (0: no limit)")
	fl.Int64Var(&f.wallSec, "max-wall-sec", 0, "wall-time budget in seconds (0: no limit)")
	fl.StringVar(&f.network, "network", "none", "sandbox network: none or open")
	fl.StringVar(&f.onAsk, "on-ask", "wait", "wait: approvals wait for the owner; deny: deny them at once (CI)")
	fl.BoolVar(&f.json, "json", false, "print JSON Lines: {\"missionId\": …} first, the result envelope last")
	fl.BoolVar(&f.dirty, "include-uncommitted", false, "start from HEAD plus the project's uncommitted changes (snapshotted; your index is not touched)")
	fl.StringVar(&f.engine, "engine", "", "builtin, or an external engine: codex, claude, openclaw or command:/abs/path (default: the project's defaults.engine in .aos/config.yaml, else builtin; docs/ENGINES.md)")
	fl.StringArrayVar(&f.verify, "verify", nil, "with an external engine: a verification command aos re-runs (words split on spaces; repeatable); it must match the verification allowlist")
	fl.StringArrayVar(&f.allow, "verify-allow", nil, "with an external engine: allow verification commands starting with these words (repeatable), besides the policy's shell allow rules")
	return cmd
}

// create creates the mission through the mission service, as a local
// mission: the service validates the input and the project, checks the
// model and the daily cap, and records the audit entry.
func (s *session) create(ctx context.Context, f runFlags, objective string) (string, error) {
	budget, turns, wall := f.budgetUSD, f.maxTurns, f.wallSec
	req := mission.CreateRequest{Objective: objective, Criteria: f.criteria, Workspace: f.project,
		Model: f.model, Effort: f.effort, Network: f.network, BudgetUSD: &budget, MaxTurns: &turns, MaxWallSec: &wall,
		IncludeUncommitted: f.dirty, Local: true, Engine: f.engine, VerifyAllow: f.allow}
	for _, v := range f.verify {
		argv := strings.Fields(v)
		if len(argv) == 0 {
			return "", usage("--verify is empty")
		}
		req.Verify, req.VerifyLabels = append(req.Verify, argv), append(req.VerifyLabels, v)
	}
	m, err := s.service().CreateMission(ctx, localActor(), req)
	if err != nil {
		return "", missionError(err)
	}
	if s.label != "" {
		fmt.Fprintln(s.out, s.label)
	}
	return m.ID, nil
}

// objectiveArg requires the one argument of aos run, the objective: when it
// is missing (or split into several words without quotes), it says so,
// prints the usage on stderr and exits 2.
func objectiveArg(cmd *cobra.Command, args []string) error {
	if len(args) == 1 && strings.TrimSpace(args[0]) != "" {
		return nil
	}
	fmt.Fprint(cmd.ErrOrStderr(), cmd.UsageString())
	if len(args) > 1 {
		return usage("give the objective as one argument, in quotes (got %d arguments): %s", len(args), cmd.UseLine())
	}
	return usage("the objective is missing: %s", cmd.UseLine())
}

func newResumeCmd(version string) *cobra.Command {
	var asJSON bool
	var onAsk string
	cmd := &cobra.Command{
		Use: "resume MISSION",
		Long: `Continue an interrupted mission in this process. MISSION is its id or a unique
prefix of it (among the newest 1000 missions). If the process that ran it
died on this machine (kill -9, a crash), aos takes its lease over at once;
otherwise it says whose lease it waits for, and how long.`,
		Short: "Continue an interrupted mission in this process (after a crash, a reboot or a second Ctrl-C)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openSession(cmd.Context(), version, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			defer s.close()
			s.json, s.onAsk = asJSON, onAsk
			id, err := resolveLocalMission(cmd.Context(), s.service(), args[0])
			if err != nil {
				return err
			}
			s.leaseNotice(cmd.Context(), id)
			return s.drive(cmd.Context(), id)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON Lines: {\"missionId\": …} first, the result envelope last")
	cmd.Flags().StringVar(&onAsk, "on-ask", "wait", "wait or deny")
	return cmd
}

func newDemoCmd(version string) *cobra.Command {
	var keep string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Fix a failing test in a throwaway repository, with a SCRIPTED model (no API key), through the real kernel, SDK, sandbox and git",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			dir := keep
			if dir == "" {
				d, err := os.MkdirTemp("", "aos-demo-")
				if err != nil {
					return err
				}
				dir = d
			}
			repo := filepath.Join(dir, "calc")
			if err := demo.WriteRepo(repo); err != nil {
				return err
			}
			set, err := script.Parse(demo.Script(), "demo")
			if err != nil {
				return err
			}
			srv, err := script.Start(set, "127.0.0.1:0", script.Options{})
			if err != nil {
				return err
			}
			defer srv.Close()
			s, err := openSession(ctx, version, cmd.OutOrStdout())
			if err != nil {
				return err
			}
			defer s.close()
			// The scripted server needs no key; give the SDK a placeholder
			// and read nothing else from the environment.
			s.adapter = worker.AdapterFunc(srv.URL(), func(k string) string {
				if strings.HasSuffix(k, "_API_KEY") {
					return "scripted-model-no-key"
				}
				return ""
			})
			s.onAsk = "deny"
			s.label = "aos demo — the model is SCRIPTED (" + demo.Model + "), not a real AI. Everything else is real:\n" +
				"the kernel and database, the official Anthropic SDK over HTTP, the bubblewrap sandbox and git.\n" +
				"repository: " + repo
			mid, err := s.create(ctx, runFlags{project: repo, model: demo.Model, criteria: []string{demo.Criterion}, network: "none", budgetUSD: 1, maxTurns: 20}, demo.Objective)
			if err != nil {
				return err
			}
			if err := s.drive(ctx, mid); err != nil {
				return err
			}
			fmt.Fprintf(s.out, "\nthe fix is committed on the mission branch:\n  git -C %s log --oneline -2\n", repo)
			return nil
		},
	}
	cmd.Flags().StringVar(&keep, "dir", "", "create the demo repository here instead of a temp dir")
	return cmd
}

// resolveLocalMission turns a mission id, or a unique prefix of one among
// the newest 1000 missions, into the id. None is exit 4, several a usage
// error.
func resolveLocalMission(ctx context.Context, svc *mission.Service, id string) (string, error) {
	if len(id) >= fullIDLen {
		_, err := svc.GetMission(ctx, id)
		if errors.Is(err, mission.ErrNotFound) {
			return "", &exitError{code: exitNotFound, msg: "not found: no mission " + id}
		}
		return id, missionError(err)
	}
	ms, err := svc.ListMissions(ctx, mission.ListMissionsRequest{Limit: 1000})
	if err != nil {
		return "", missionError(err)
	}
	var ids []string
	for _, m := range ms {
		if strings.HasPrefix(m.ID, id) {
			ids = append(ids, m.ID)
		}
	}
	return uniquePrefix("mission", id, ids)
}

// leaseNotice says whose lease a resume waits for, if any: a holder of this
// machine that is gone is taken over at once; another is waited for until
// its lease ends, which it may keep renewing while it runs the mission.
func (s *session) leaseNotice(ctx context.Context, missionID string) {
	ls, err := s.k.LeaseHolders(ctx, missionID)
	if err != nil {
		return
	}
	out := s.out
	if s.json {
		out = os.Stderr // stdout carries JSON Lines only
	}
	for _, l := range ls {
		left := l.ExpiresIn.Round(time.Second)
		switch {
		case l.Gone:
			fmt.Fprintf(out, "the aos process that ran this mission (pid %d on %s) is gone; taking over its lease now\n", l.PID, l.Host)
		case l.Alive:
			fmt.Fprintf(out, "aos is waiting for the lease of process %d on host %s, which is still running this mission; the lease ends in %s unless that process renews it (stop it to resume here)\n", l.PID, l.Host, left)
		default:
			fmt.Fprintf(out, "aos is waiting for the lease of process %d on host %s (worker %s); it ends in %s unless that process renews it\n", l.PID, l.Host, l.Owner, left)
		}
	}
}
