package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/client"
	"github.com/aos-run/aos/internal/mission"
)

// fullIDLen is a UUID's length; a shorter id is taken as a prefix.
const fullIDLen = 36

func (e *clientEnv) newMissionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mission",
		Short: "Create, list, show, watch, cancel and steer missions on the server (aos login first)",
	}
	cmd.AddCommand(e.newMissionCreateCmd(), e.newMissionLsCmd(), e.newMissionShowCmd(), e.newMissionWatchCmd(),
		e.newMissionCancelCmd(), e.newMissionRetryCmd(), e.newMissionMessageCmd())
	return cmd
}

type createFlags struct {
	criteria  []string
	project   string
	workspace string
	model     string
	effort    string
	budgetUSD float64
	maxTurns  int
	network   string
	watch     bool
	json      bool
	dirty     bool // --include-uncommitted
	engine    string
}

func (e *clientEnv) newMissionCreateCmd() *cobra.Command {
	var f createFlags
	cmd := &cobra.Command{
		Use:   `create "objective" [--criteria TEXT]... [--project ID | --workspace DIR] [flags]`,
		Short: "Create a mission; --watch follows it to the end",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: e.missionRunE(func(ctx context.Context, cmd *cobra.Command, c missionAPI, args []string) error {
			if f.project == "" && f.workspace == "" {
				return usage("give --project ID or --workspace DIR (a directory under the server's workspace root)")
			}
			if f.network != "" && f.network != "none" && f.network != "open" {
				return usage("--network must be none or open")
			}
			projectID, err := projectIDOf(ctx, c, f.project)
			if err != nil {
				return err
			}
			req := mission.CreateRequest{Objective: args[0], Criteria: f.criteria, ProjectID: projectID, Workspace: f.workspace,
				Model: f.model, Effort: f.effort, Network: f.network, IncludeUncommitted: f.dirty, Engine: f.engine}
			fl := cmd.Flags()
			if fl.Changed("budget-usd") {
				req.BudgetUSD = &f.budgetUSD
			}
			if fl.Changed("max-turns") {
				req.MaxTurns = &f.maxTurns
			}
			m, err := c.CreateMission(ctx, req)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch {
			case f.json && !f.watch:
				return printJSON(out, m)
			case !f.json:
				fmt.Fprintf(out, "mission %s created (%s, %s)\n", m.ID, m.Status, orDash(m.Model))
			}
			if !f.watch {
				fmt.Fprintf(out, "watch it: aos mission watch %s\n", m.ID)
				return nil
			}
			return e.watch(ctx, cmd, c, m.ID, f.json)
		}),
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.criteria, "criteria", nil, "a done criterion (repeatable)")
	fl.StringVar(&f.project, "project", "", "the project's id, or a unique prefix of it (as aos project ls shows)")
	fl.StringVar(&f.workspace, "workspace", "", "a directory under the server's workspace root (absolute, or relative to the root)")
	fl.StringVar(&f.model, "model", "", "model id (the server's default when empty)")
	fl.StringVar(&f.effort, "effort", "", "low, medium, high, xhigh or max")
	fl.Float64Var(&f.budgetUSD, "budget-usd", 0, "USD budget (the server's default when not given)")
	fl.IntVar(&f.maxTurns, "max-turns", 0, "model turns at most (the server's default when not given)")
	fl.StringVar(&f.network, "network", "", "sandbox network: none or open")
	fl.BoolVar(&f.dirty, "include-uncommitted", false, "start from the project's HEAD plus its uncommitted changes (snapshotted; the owner's index is not touched)")
	fl.BoolVar(&f.watch, "watch", false, "follow the mission to its end (exit code as aos mission watch)")
	fl.StringVar(&f.engine, "engine", "", "builtin (default), or an external engine: command:/abs/path (docs/ENGINES.md)")
	fl.BoolVar(&f.json, "json", false, "print the created mission as JSON (with --watch: the events as JSON lines)")
	cmd.MarkFlagsMutuallyExclusive("project", "workspace")
	return cmd
}

func (e *clientEnv) newMissionLsCmd() *cobra.Command {
	var status, project string
	var limit int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls [--status S] [--project ID]",
		Short: "List missions, newest first",
		Args:  argsUsage(cobra.NoArgs),
		RunE: e.missionRunE(func(ctx context.Context, cmd *cobra.Command, c missionAPI, _ []string) error {
			projectID, err := projectIDOf(ctx, c, project)
			if err != nil {
				return err
			}
			ms, err := c.ListMissions(ctx, client.ListMissionsOptions{Status: status, ProjectID: projectID, Limit: limit})
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), ms)
			}
			if len(ms) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no missions")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATUS\tSPENT\tMODEL\tCREATED\tTITLE")
			for _, m := range ms {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", short(m.ID), m.Status, money(m.SpentUSD), orDash(m.Model), when(m.CreatedAt), oneLine(m.Title, 60))
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().StringVar(&status, "status", "", "only missions in this status (queued, running, waiting, done, partial, blocked, failed, budget_exhausted, cancelled)")
	cmd.Flags().StringVar(&project, "project", "", "only this project's missions")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many (the server's default, 100, when 0)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	return cmd
}

// missionDetail is aos mission show --json's document.
type missionDetail struct {
	Mission mission.Mission `json:"mission"`
	Runs    []mission.Run   `json:"runs"`
	Waits   []mission.Wait  `json:"pendingWaits"`
}

func (e *clientEnv) newMissionShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a mission, its runs and its pending waits (ID may be a unique prefix)",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: e.missionRunE(func(ctx context.Context, cmd *cobra.Command, c missionAPI, args []string) error {
			id, err := resolveMission(ctx, c, args[0])
			if err != nil {
				return err
			}
			var d missionDetail
			if d.Mission, err = c.GetMission(ctx, id); err != nil {
				return err
			}
			if d.Runs, err = c.ListRuns(ctx, id); err != nil {
				return err
			}
			if d.Waits, err = c.ListWaits(ctx, client.ListWaitsOptions{Status: "pending", MissionID: id}); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printJSON(out, d)
			}
			m := d.Mission
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "mission\t%s\n", m.ID)
			fmt.Fprintf(tw, "title\t%s\n", oneLine(m.Title, 200))
			fmt.Fprintf(tw, "status\t%s\n", m.Status)
			fmt.Fprintf(tw, "model\t%s\n", orDash(m.Model))
			fmt.Fprintf(tw, "spent\t%s\n", money(m.SpentUSD))
			fmt.Fprintf(tw, "created\t%s\n", when(m.CreatedAt))
			if m.EndedAt != 0 {
				fmt.Fprintf(tw, "ended\t%s\n", when(m.EndedAt))
			}
			if g := m.Git; g != nil {
				fmt.Fprintf(tw, "branch\t%s (from %s)\n", g.Branch, g.Base)
				if g.Snapshot != "" {
					fmt.Fprintf(tw, "snapshot\t%s (your uncommitted changes when it was created)\n", g.Snapshot)
				}
				fmt.Fprintf(tw, "look\t%s\n", g.Log)
				fmt.Fprintf(tw, "merge\t%s\n", g.Merge)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintln(out, "\nruns:")
			tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "  ID\tLOGIC\tSTATUS\tTURNS\tSPENT\tPARENT")
			for _, r := range d.Runs {
				fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\t%s\n", short(r.ID), r.Logic, r.Status, r.Turns, money(r.SpentUSD), orDash(short(r.ParentRunID)))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if len(d.Waits) == 0 {
				fmt.Fprintln(out, "\nno pending waits")
				return nil
			}
			fmt.Fprintln(out, "\npending waits:")
			printWaits(out, d.Waits)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"mission", "runs", "pendingWaits"} as JSON`)
	return cmd
}

func (e *clientEnv) newMissionCancelCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Request a mission's cancellation",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: e.missionRunE(func(ctx context.Context, cmd *cobra.Command, c missionAPI, args []string) error {
			id, err := resolveMission(ctx, c, args[0])
			if err != nil {
				return err
			}
			m, err := c.CancelMission(ctx, id)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), m)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "mission %s: cancellation requested (status %s)\n", m.ID, m.Status)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the mission as JSON")
	return cmd
}

func (e *clientEnv) newMissionMessageCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   `message ID "text"`,
		Short: "Send a steering message to a mission's agent (its root run)",
		Args:  argsUsage(cobra.ExactArgs(2)),
		RunE: e.missionRunE(func(ctx context.Context, cmd *cobra.Command, c missionAPI, args []string) error {
			id, err := resolveMission(ctx, c, args[0])
			if err != nil {
				return err
			}
			m, err := c.GetMission(ctx, id)
			if err != nil {
				return err
			}
			r, err := c.PostMessage(ctx, m.RootRunID, args[1])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), r)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "message %d sent to mission %s\n", r.ID, m.ID)
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	return cmd
}

// resolveMission turns a unique prefix of a mission id (as aos mission ls
// shows) into the id, among the newest 1000 missions.
func resolveMission(ctx context.Context, c missionAPI, id string) (string, error) {
	if len(id) >= fullIDLen {
		return id, nil
	}
	ms, err := c.ListMissions(ctx, client.ListMissionsOptions{Limit: 1000})
	if err != nil {
		return "", err
	}
	var ids []string
	for _, m := range ms {
		if strings.HasPrefix(m.ID, id) {
			ids = append(ids, m.ID)
		}
	}
	return uniquePrefix("mission", id, ids)
}

// resolveWait turns a unique prefix of a pending wait's id into the id.
func resolveWait(ctx context.Context, c missionAPI, id string) (string, error) {
	if len(id) >= fullIDLen {
		return id, nil
	}
	ws, err := c.ListWaits(ctx, client.ListWaitsOptions{Status: "pending"})
	if err != nil {
		return "", err
	}
	var ids []string
	for _, w := range ws {
		if strings.HasPrefix(w.ID, id) {
			ids = append(ids, w.ID)
		}
	}
	return uniquePrefix("pending wait", id, ids)
}

func uniquePrefix(what, prefix string, ids []string) (string, error) {
	switch {
	case prefix == "":
		return "", usage("empty %s id", what)
	case len(ids) == 1:
		return ids[0], nil
	case len(ids) == 0:
		return "", &exitError{code: exitNotFound, msg: "not found: no " + what + " " + prefix}
	}
	return "", usage("%s id %s is ambiguous (%d match); give more characters", what, prefix, len(ids))
}
