package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/client"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/termtext"
	"github.com/aos-run/aos/internal/worker"
)

// newStoreCmd returns `aos store list|inspect`: the package catalog of
// seed 000, as the owner sees it. Neither runs a package script.
func (e *clientEnv) newStoreCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "store", Short: "Browse the agent package catalog (official and installed packages)"}
	var offset, limit int
	var asJSON bool
	list := &cobra.Command{
		Use:   "list [QUERY...]",
		Short: "List packages matching every term of QUERY (id, name, description, category)",
		Args:  argsUsage(cobra.ArbitraryArgs),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			q := url.Values{"query": {strings.Join(args, " ")}, "offset": {strconv.Itoa(offset)}, "limit": {strconv.Itoa(limit)}}
			var res agent.StoreListResult
			if err := c.Do(ctx, "GET", "/store/packages", q, nil, &res); err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), res)
			}
			printPackages(cmd.OutOrStdout(), res.Packages)
			if res.NextOffset != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "more: aos store list --offset %d %s\n", *res.NextOffset, termtext.Line(strings.Join(args, " ")))
			}
			return nil
		}),
	}
	list.Flags().IntVar(&offset, "offset", 0, "skip this many matches (0-25000)")
	list.Flags().IntVar(&limit, "limit", agent.DefaultLimit, "page size (1-10)")
	list.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	var inspJSON bool
	inspect := &cobra.Command{
		Use:   "inspect PACKAGE",
		Short: "Show a package, its installation and doctor evidence, and up to five agents made from it",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			var res agent.StoreInspectResult
			if err := c.Do(ctx, "GET", "/store/packages/"+pathID(args[0]), nil, nil, &res); err != nil {
				return err
			}
			if inspJSON {
				return printJSON(cmd.OutOrStdout(), res)
			}
			w := cmd.OutOrStdout()
			p := res.Package
			fmt.Fprintf(w, "%s  %s (%s)\n%s\n", p.PackageID, termtext.Line(p.Name), termtext.Line(p.Category), termtext.Line(p.Description))
			fmt.Fprintf(w, "engine %s; installation %s; verified %v; install allowed %v; version %s\n", termtext.Line(p.Engine), p.Installation, p.Verified, p.InstallAllowed, termtext.Line(deref(p.Version)))
			if p.Broken != nil {
				fmt.Fprintf(w, "broken: %s\n", termtext.Line(*p.Broken))
			}
			fmt.Fprintf(w, "readiness: %s (package doctor; engine authentication unknown)\n", p.Readiness.State)
			for _, l := range p.Readiness.Lines {
				fmt.Fprintf(w, "  | %s\n", termtext.Line(l))
			}
			for _, a := range res.Candidates {
				fmt.Fprintf(w, "agent %s  %s  %s\n", a.AgentID, a.Runtime, termtext.Line(deref(a.Workspace)))
			}
			if res.CandidatesTruncated {
				fmt.Fprintln(w, "more agents: aos agent ls")
			}
			return nil
		}),
	}
	inspect.Flags().BoolVar(&inspJSON, "json", false, "print the API's JSON")
	cmd.AddCommand(list, inspect)
	return cmd
}

// pathID escapes a package id's two parts for a route path.
func pathID(id string) string {
	owner, name, _ := strings.Cut(id, "/")
	return url.PathEscape(owner) + "/" + url.PathEscape(name)
}

func deref(s *string) string {
	if s == nil {
		return "-"
	}
	return *s
}

func printPackages(w io.Writer, ps []agent.Package) {
	if len(ps) == 0 {
		fmt.Fprintln(w, "no packages")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tNAME\tINSTALLATION\tREADINESS\tVERIFIED\tINSTALL ALLOWED")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%v\n", p.PackageID, termtext.Line(p.Name), p.Installation, p.Readiness.State, p.Verified, p.InstallAllowed)
	}
	_ = tw.Flush()
}

// newPackageCmd returns `aos package ls|add|review`.
func (e *clientEnv) newPackageCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "package", Short: "Manage agent packages: list, add a community package, review it"}
	var asJSON bool
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List every package: the official catalog and the installed index (viewers too)",
		Args:  argsUsage(cobra.NoArgs),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, _ []string) error {
			var ps []agent.Package
			if err := c.Do(ctx, "GET", "/packages", nil, nil, &ps); err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), ps)
			}
			printPackages(cmd.OutOrStdout(), ps)
			return nil
		}),
	}
	ls.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	add := &cobra.Command{
		Use:   "add DIR|GIT-URL",
		Short: "Add a community package (local administrator; not installable until reviewed; nothing is run)",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAgents(cmd.Context(), func(ctx context.Context, a *agent.Service) error {
				p, err := a.AddPackage(ctx, args[0])
				if err != nil {
					return agentExit(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "package %s added; read it, then: aos package review %s\n", p.PackageID, p.PackageID)
				return nil
			})
		},
	}
	review := &cobra.Command{
		Use:   "review PACKAGE",
		Short: "Record that you reviewed a community package (local administrator): its setup may then run as your user, NOT sandboxed",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withAgents(cmd.Context(), func(ctx context.Context, a *agent.Service) error {
				p, err := a.ReviewPackage(ctx, args[0])
				if err != nil {
					return agentExit(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "package %s reviewed; install allowed: %v\n", p.PackageID, p.InstallAllowed)
				return nil
			})
		},
	}
	cmd.AddCommand(ls, add, review)
	return cmd
}

// newAgentCmd returns `aos agent prepare|ls|show|send`.
func (e *clientEnv) newAgentCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "agent", Short: "Prepare agents from packages and send them tasks"}
	var key, newName, existing string
	var isNew, wait, asJSON bool
	prepare := &cobra.Command{
		Use:   "prepare PACKAGE (--new [--name NAME] | --existing PATH) [--key KEY]",
		Short: "Prepare a new agent: install (once), doctor, workspace, create, launch check; no task is sent",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			ws := agent.Workspace{Kind: agent.WorkspaceNew, Name: newName}
			switch {
			case existing != "" && (isNew || newName != ""):
				return usage("--existing and --new/--name exclude each other")
			case existing != "":
				ws = agent.Workspace{Kind: agent.WorkspaceExisting, Path: existing}
			case !isNew && newName == "":
				return usage("choose a workspace: --new [--name NAME] or --existing PATH")
			}
			if key == "" {
				b := make([]byte, 6)
				_, _ = rand.Read(b)
				key = "cli-" + hex.EncodeToString(b)
				fmt.Fprintf(cmd.ErrOrStderr(), "idempotency key %s (retry with --key %s, never with a new key)\n", key, key)
			}
			var ls agent.StoreListResult
			one := url.Values{"limit": {"1"}}
			if err := c.Do(ctx, "GET", "/store/packages", one, nil, &ls); err != nil {
				return err
			}
			req := agent.PrepareRequest{MachineID: ls.MachineID, PackageID: args[0], IdempotencyKey: key, Workspace: ws}
			var res agent.PrepareResult
			if err := c.Do(ctx, "POST", "/agents/prepare", nil, req, &res); err != nil {
				return err
			}
			op := res.Operation
			if !asJSON {
				fmt.Fprintf(cmd.OutOrStdout(), "operation %s %s (%s)\n", op.OperationID, res.Status, op.State)
			}
			if wait {
				var err error
				if op, err = pollOperation(ctx, c, op.OperationID, cmd.ErrOrStderr()); err != nil {
					return err
				}
			}
			return showOperation(cmd.OutOrStdout(), op, asJSON, wait)
		}),
	}
	prepare.Flags().StringVar(&key, "key", "", "idempotency key (1-64 of A-Z a-z 0-9 _ -); a retry must reuse it")
	prepare.Flags().BoolVar(&isNew, "new", false, "a new workspace under the workspace root")
	prepare.Flags().StringVar(&newName, "name", "", "the new workspace's folder name (implies --new)")
	prepare.Flags().StringVar(&existing, "existing", "", "an existing repository inside the workspace root")
	prepare.Flags().BoolVar(&wait, "wait", false, "poll the operation until it is ready, failed or needs action")
	prepare.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	var lsJSON bool
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List agents",
		Args:  argsUsage(cobra.NoArgs),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, _ []string) error {
			as, err := listAllAgents(ctx, c)
			if err != nil {
				return err
			}
			if lsJSON {
				return printJSON(cmd.OutOrStdout(), as)
			}
			if len(as) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no agents")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "AGENT\tPACKAGE\tENGINE\tRUNTIME\tWORKSPACE")
			for _, a := range as {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.AgentID, deref(a.PackageID), termtext.Line(a.Engine), a.Runtime, termtext.Line(deref(a.Workspace)))
			}
			return tw.Flush()
		}),
	}
	ls.Flags().BoolVar(&lsJSON, "json", false, "print the API's JSON")
	show := &cobra.Command{
		Use:   "show AGENT",
		Short: "Show an agent",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			var a agent.Agent
			if err := c.Do(ctx, "GET", "/agents/"+url.PathEscape(args[0]), nil, nil, &a); err != nil {
				return err
			}
			return printJSON(cmd.OutOrStdout(), a)
		}),
	}
	var sendKey string
	var sendJSON bool
	send := &cobra.Command{
		Use:   "send AGENT TEXT --key KEY",
		Short: "Send a task to an agent once per key: it becomes a mission in the agent's workspace",
		Args:  argsUsage(cobra.ExactArgs(2)),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			if sendKey == "" {
				return usage("--key is required: a retry must reuse it so the task is sent once")
			}
			var ls agent.StoreListResult
			if err := c.Do(ctx, "GET", "/store/packages", url.Values{"limit": {"1"}}, nil, &ls); err != nil {
				return err
			}
			var rc agent.Receipt
			req := agent.TurnSendRequest{MachineID: ls.MachineID, AgentID: args[0], IdempotencyKey: sendKey, Text: args[1]}
			if err := c.Do(ctx, "POST", "/turns", nil, req, &rc); err != nil {
				return err
			}
			if sendJSON {
				if err := printJSON(cmd.OutOrStdout(), rc); err != nil {
					return err
				}
			} else {
				dup := ""
				if rc.Duplicate {
					dup = " (already sent under this key)"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "receipt %s: %s; mission %s%s\n", rc.ReceiptID, rc.State, orDash(rc.MissionID), dup)
			}
			if rc.State == agent.ReceiptFailed {
				msg := "the turn was not delivered"
				if rc.Error != nil {
					msg = rc.Error.Code + ": " + rc.Error.Message
				}
				return &exitError{code: exitActionNeeded, msg: oneLine(msg, 300)}
			}
			return nil
		}),
	}
	send.Flags().StringVar(&sendKey, "key", "", "idempotency key of this task (1-64 of A-Z a-z 0-9 _ -)")
	send.Flags().BoolVar(&sendJSON, "json", false, "print the API's JSON")
	cmd.AddCommand(prepare, ls, show, send)
	return cmd
}

// newOperationCmd returns `aos operation get`.
func (e *clientEnv) newOperationCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "operation", Short: "Follow preparation operations"}
	var wait, asJSON bool
	get := &cobra.Command{
		Use:   "get OPERATION",
		Short: "Show a preparation operation (its state, phase, agent, error and guidance)",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			var op agent.Operation
			var err error
			if wait {
				op, err = pollOperation(ctx, c, args[0], cmd.ErrOrStderr())
			} else {
				err = c.Do(ctx, "GET", "/operations/"+url.PathEscape(args[0]), nil, nil, &op)
			}
			if err != nil {
				return err
			}
			return showOperation(cmd.OutOrStdout(), op, asJSON, true)
		}),
	}
	get.Flags().BoolVar(&wait, "wait", false, "poll until it is ready, failed or needs action")
	get.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	cmd.AddCommand(get)
	return cmd
}

// pollOperation polls every two seconds (the seed's pace) until the
// operation settles, narrating phase changes on w.
func pollOperation(ctx context.Context, c *client.Client, id string, w io.Writer) (agent.Operation, error) {
	last := ""
	for {
		var op agent.Operation
		if err := c.Do(ctx, "GET", "/operations/"+url.PathEscape(id), nil, nil, &op); err != nil {
			return op, err
		}
		if now := op.State + "/" + op.Phase; now != last {
			fmt.Fprintf(w, "… %s\n", now)
			last = now
		}
		if op.State != agent.StateAccepted && op.State != agent.StateRunning {
			return op, nil
		}
		select {
		case <-ctx.Done():
			return op, ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// showOperation prints op; a settled operation that is not ready exits 8
// when settledExit.
func showOperation(w io.Writer, op agent.Operation, asJSON, settledExit bool) error {
	if asJSON {
		if err := printJSON(w, op); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "operation %s: %s (phase %s); agent %s; workspace %s\n", op.OperationID, op.State, op.Phase, deref(op.AgentID), termtext.Line(deref(op.Workspace)))
		for _, l := range op.Doctor {
			fmt.Fprintf(w, "  | %s\n", termtext.Line(l))
		}
	}
	if settledExit && (op.State == agent.StateFailed || op.State == agent.StateNeedsUserAction) {
		msg := op.State
		if op.Error != nil {
			msg += ": " + op.Error.Code + ": " + op.Error.Message
		}
		if op.Guidance != nil {
			msg += " (" + *op.Guidance + ")"
		}
		return &exitError{code: exitActionNeeded, msg: oneLine(msg, 500)}
	}
	return nil
}

// withAgents runs fn with an agent service over the configured database
// and data dir, as the local administrator (like aos token): it starts no
// preparation job and recovers nothing, which is aos server's business.
func withAgents(ctx context.Context, fn func(context.Context, *agent.Service) error) error {
	cfg, log, err := env(ctx, os.Stderr)
	if err != nil {
		return err
	}
	st, err := worker.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	svc := mission.New(kernel.New(st, kernel.Options{DataDir: cfg.DataDir, Logger: log}), mission.Options{WorkspaceRoot: cfg.WorkspaceRoot, Getenv: cfg.Getenv, Logger: log,
		AllowPrivateClones: cfg.Getenv("AOS_CLONE_ALLOW_PRIVATE") == "1"})
	a, err := agent.New(agent.Options{Store: st, Missions: svc, WorkspaceRoot: cfg.WorkspaceRoot, DataDir: cfg.DataDir, Getenv: cfg.Getenv, Logger: log})
	if err != nil {
		return err
	}
	return fn(ctx, a)
}

// agentExit maps the agent service's refusals onto the exit code table.
func agentExit(err error) error {
	var ae *agent.Error
	if !errors.As(err, &ae) {
		return err
	}
	msg := ae.Code + ": " + ae.Message
	if ae.Guidance != "" {
		msg += " (" + ae.Guidance + ")"
	}
	switch ae.Code {
	case agent.CodeInvalidRequest, agent.CodeInvalidWorkspace:
		return &exitError{code: exitUsage, msg: oneLine(msg, 500)}
	case agent.CodePackageNotFound:
		return &exitError{code: exitNotFound, msg: oneLine(msg, 500)}
	}
	return &exitError{code: exitFailure, msg: oneLine(msg, 500)}
}

// listAllAgents reads every agent, a page of agentPage at a time.
func listAllAgents(ctx context.Context, c *client.Client) ([]agent.Agent, error) {
	const agentPage = 1000
	all := []agent.Agent{}
	q := url.Values{"limit": {strconv.Itoa(agentPage)}}
	for {
		var page []agent.Agent
		if err := c.Do(ctx, "GET", "/agents", q, nil, &page); err != nil {
			return nil, err
		}
		all = append(all, page...)
		if len(page) < agentPage {
			return all, nil
		}
		q.Set("after", page[len(page)-1].AgentID)
	}
}
