package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/client"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/termtext"
)

// printWaits prints waits as aligned rows.
func printWaits(out io.Writer, ws []mission.Wait) {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  WAIT\tKIND\tMISSION\tCREATED\tDETAIL")
	for _, w := range ws {
		p := payloadOf(w.Payload)
		detail := str(p, "title")
		if sum := str(p, "summary"); detail == "" && sum != "" {
			detail = "did it run? " + sum // a reconcile question
		}
		if detail == "" {
			detail = str(p, "text")
		}
		if r := str(p, "detail"); r != "" {
			detail += ": " + r
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", w.ID, w.Kind, short(w.MissionID), when(w.CreatedAt), oneLine(detail, 100))
	}
	_ = tw.Flush()
}

func (e *clientEnv) newProjectCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "project", Short: "Register, list, rename and unregister projects on the server"}
	var name, cloneURL string
	var initRepo, asJSON bool
	add := &cobra.Command{
		Use:   "add PATH [--name NAME] [--init | --clone URL]",
		Short: "Register a project: an existing repository at PATH (on the server), a new one (--init) or a clone (--clone URL)",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			req := mission.CreateProjectRequest{Name: name, Path: args[0], Mode: mission.ProjectExisting}
			switch {
			case initRepo:
				req.Mode = mission.ProjectInit
			case cloneURL != "":
				req.Mode, req.URL = mission.ProjectClone, cloneURL
			}
			if req.Name == "" {
				req.Name = filepath.Base(filepath.Clean(args[0]))
			}
			p, err := c.AddProject(ctx, req)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), p)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "project %s added: %s (%s, %s)\n", p.ID, termtext.Line(p.Name), p.Mode, termtext.Line(orDash(p.Dir)))
			return nil
		}),
	}
	add.Flags().StringVar(&name, "name", "", "the project's name (default: PATH's last element)")
	add.Flags().BoolVar(&initRepo, "init", false, "create a new repository at PATH")
	add.Flags().StringVar(&cloneURL, "clone", "", "clone this git URL to PATH")
	add.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	add.MarkFlagsMutuallyExclusive("init", "clone")
	var lsJSON bool
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List projects",
		Args:  argsUsage(cobra.NoArgs),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, _ []string) error {
			ps, err := c.ListProjects(ctx)
			if err != nil {
				return err
			}
			if lsJSON {
				return printJSON(cmd.OutOrStdout(), ps)
			}
			if len(ps) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no projects")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tMODE\tDIR\tCREATED")
			for _, p := range ps {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.ID, termtext.Line(p.Name), p.Mode, termtext.Line(orDash(p.Dir)), when(p.CreatedAt)) // full ids: few, short, and what --project takes
			}
			return tw.Flush()
		}),
	}
	ls.Flags().BoolVar(&lsJSON, "json", false, "print the API's JSON")
	cmd.AddCommand(add, ls, e.newProjectRmCmd(), e.newProjectRenameCmd())
	return cmd
}

func (e *clientEnv) newProjectRmCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID",
		Short: "Unregister a project (ID may be a unique prefix); its directory and repository stay on the server",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			p, err := resolveProject(ctx, c, args[0])
			if err != nil {
				return err
			}
			if err := c.DeleteProject(ctx, p.ID); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "project %s (%s) unregistered; its directory %s was left as it is\n", p.ID, termtext.Line(p.Name), termtext.Line(orDash(p.Dir)))
			return nil
		}),
	}
}

func (e *clientEnv) newProjectRenameCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rename ID NAME",
		Short: "Rename a project (ID may be a unique prefix); its directory does not move",
		Args:  argsUsage(cobra.ExactArgs(2)),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			p, err := resolveProject(ctx, c, args[0])
			if err != nil {
				return err
			}
			p, err = c.RenameProject(ctx, p.ID, args[1])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), p)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "project %s renamed to %s\n", p.ID, termtext.Line(p.Name))
			return nil
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	return cmd
}

// projectIDOf is the full id of the project named by id or a unique prefix
// of it (aos project ls shows ids a user may shorten); "" stays "".
func projectIDOf(ctx context.Context, c missionAPI, id string) (string, error) {
	if id == "" {
		return "", nil
	}
	p, err := resolveProject(ctx, c, id)
	return p.ID, err
}

// resolveProject finds the project whose id is id or starts with it.
func resolveProject(ctx context.Context, c missionAPI, id string) (mission.Project, error) {
	ps, err := c.ListProjects(ctx)
	if err != nil {
		return mission.Project{}, err
	}
	var ids []string
	byID := make(map[string]mission.Project, len(ps))
	for _, p := range ps {
		if p.ID == id {
			return p, nil
		}
		if strings.HasPrefix(p.ID, id) {
			ids = append(ids, p.ID)
			byID[p.ID] = p
		}
	}
	full, err := uniquePrefix("project", id, ids)
	if err != nil {
		return mission.Project{}, err
	}
	return byID[full], nil
}

func (e *clientEnv) newPolicyCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "policy", Short: "List, add and remove policy rules on the server"}
	var project string
	var lsJSON bool
	ls := &cobra.Command{
		Use:   "ls [--project ID]",
		Short: "List policy rules",
		Args:  argsUsage(cobra.NoArgs),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, _ []string) error {
			rs, err := c.ListRules(ctx, project)
			if err != nil {
				return err
			}
			if lsJSON {
				return printJSON(cmd.OutOrStdout(), rs)
			}
			if len(rs) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no rules")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tDECISION\tTOOL\tCOMMAND PREFIX\tPROJECT\tNOTE")
			for _, r := range rs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Decision, r.Tool, termtext.Line(orDash(r.CommandPrefix)), termtext.Line(orDash(r.ProjectID)), oneLine(r.Note, 60))
			}
			return tw.Flush()
		}),
	}
	ls.Flags().StringVar(&project, "project", "", "only this project's rules")
	ls.Flags().BoolVar(&lsJSON, "json", false, "print the API's JSON")

	var req mission.AddRuleRequest
	var addJSON bool
	add := &cobra.Command{
		Use:   "add --tool TOOL --decision allow|ask|deny [--command-prefix P] [--project ID] [--note N]",
		Short: "Add a policy rule",
		Args:  argsUsage(cobra.NoArgs),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, _ []string) error {
			if req.Tool == "" || req.Decision == "" {
				return usage("--tool and --decision are required")
			}
			r, err := c.AddRule(ctx, req)
			if err != nil {
				return err
			}
			if addJSON {
				return printJSON(cmd.OutOrStdout(), r)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "rule %s added: %s %s\n", r.ID, r.Decision, strings.TrimSpace(r.Tool+" "+r.CommandPrefix))
			return nil
		}),
	}
	add.Flags().StringVar(&req.Tool, "tool", "", "the tool the rule matches (e.g. shell)")
	add.Flags().StringVar(&req.Decision, "decision", "", "allow, ask or deny")
	add.Flags().StringVar(&req.CommandPrefix, "command-prefix", "", "for shell: the command prefix the rule matches")
	add.Flags().StringVar(&req.ProjectID, "project", "", "limit the rule to a project (default: global)")
	add.Flags().StringVar(&req.Note, "note", "", "a note")
	add.Flags().BoolVar(&addJSON, "json", false, "print the API's JSON")

	rm := &cobra.Command{
		Use:   "rm ID",
		Short: "Remove a policy rule",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			if err := c.DeleteRule(ctx, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "rule %s removed\n", args[0])
			return nil
		}),
	}
	cmd.AddCommand(ls, add, rm)
	return cmd
}

func (e *clientEnv) newSpendCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "spend",
		Short: "Show today's spend, the daily cap and spend by day and model",
		Args:  argsUsage(cobra.NoArgs),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, _ []string) error {
			s, err := c.Spend(ctx)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printJSON(out, s)
			}
			capText := "no cap"
			if s.CapUSD > 0 {
				capText = "cap " + money(s.CapUSD)
				if s.CapReached {
					capText += " (reached)"
				}
			}
			fmt.Fprintf(out, "today %s: %s (%s)\n", s.Today, money(s.TodayUSD), capText)
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			if len(s.Days) > 0 {
				fmt.Fprintln(tw, "\nDAY\tUSD")
				for _, d := range s.Days {
					fmt.Fprintf(tw, "%s\t%s\n", d.Day, money(d.USD))
				}
			}
			if len(s.ByModel) > 0 {
				fmt.Fprintln(tw, "\nMODEL\tUSD\tCALLS")
				for _, m := range s.ByModel {
					fmt.Fprintf(tw, "%s\t%s\t%d\n", m.Model, money(m.USD), m.Calls)
				}
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	return cmd
}

func (e *clientEnv) newModelsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the models the server knows, with prices per million tokens",
		Args:  argsUsage(cobra.NoArgs),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, _ []string) error {
			ms, err := c.Models(ctx)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), ms)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tPROVIDER\tTIER\tIN $/M\tOUT $/M\tAVAILABLE")
			for _, m := range ms {
				avail := "?"
				if m.Available != nil {
					avail = map[bool]string{true: "yes", false: "no"}[*m.Available]
				}
				if m.Note != "" {
					avail += " (" + oneLine(m.Note, 60) + ")"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", m.ID, m.Provider, orDash(m.Tier), money(m.Price.Input), money(m.Price.Output), avail)
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	return cmd
}

func (e *clientEnv) newStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show the server's health: database, workers, providers and counts",
		Args:  argsUsage(cobra.NoArgs),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, _ []string) error {
			s, err := c.Status(ctx)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printJSON(out, s)
			}
			yes := map[bool]string{true: "ok", false: "DOWN"}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "server\t%s (aos %s)\n", c.Server(), termtext.Line(s.Version))
			fmt.Fprintf(tw, "workspace root\t%s\n", termtext.Line(s.WorkspaceRoot))
			fmt.Fprintf(tw, "data dir\t%s\n", orDash(termtext.Line(s.DataDir)))
			fmt.Fprintf(tw, "database\t%s %s (%.1f ms)\n", yes[s.DB.OK], s.DB.Dialect, s.DB.LatencyMs)
			fmt.Fprintf(tw, "workers\t%s (%d alive of %d)\n", yes[s.Worker.Alive], s.Worker.Count, len(s.Worker.Workers))
			for _, w := range s.Worker.Workers {
				state := "alive"
				if !w.Alive {
					state = "last seen " + time.UnixMilli(w.LastSeen).UTC().Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "  %s\taos %s on %s, %s\n", termtext.Line(w.ID), termtext.Line(w.Version), termtext.Line(w.Hostname), state)
			}
			fmt.Fprintf(tw, "providers\tanthropic %s, openai %s\n", keyState(s.Providers.Anthropic), keyState(s.Providers.OpenAI))
			n := s.Counts
			fmt.Fprintf(tw, "missions\t%d queued, %d running, %d waiting\n", n.MissionsQueued, n.MissionsRunning, n.MissionsWaiting)
			fmt.Fprintf(tw, "pending waits\t%d\n", n.PendingWaits)
			return tw.Flush()
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	return cmd
}

func keyState(ok bool) string {
	if ok {
		return "key set"
	}
	return "no key"
}
