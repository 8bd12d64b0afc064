package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/hostconfig"
	"github.com/aos-run/aos/internal/termtext"
)

// newConfigCmd returns `aos config show|check|preview`: the configuration
// files of a project (.aos/config.yaml and the user-local file), read
// locally, never written, with no database and no server.
func newConfigCmd() *cobra.Command {
	var project, projectID, model string
	var asJSON bool
	cmd := &cobra.Command{Use: "config", Short: "Show, check and preview the configuration files (.aos/config.yaml, ~/.config/aos/config.yaml)"}
	cmd.PersistentFlags().StringVar(&project, "project", "", "the project's directory (default: the current directory)")
	cmd.PersistentFlags().StringVar(&projectID, "project-id", "", "the project's aos id, to match a registration by id")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print JSON")
	load := func(ctx context.Context) (*hostconfig.Snapshot, error) {
		root := project
		if root == "" {
			wd, err := os.Getwd()
			if err != nil {
				return nil, fmt.Errorf("config: current directory: %w", err)
			}
			root = wd
		}
		root, err := filepath.Abs(root)
		if err != nil {
			return nil, fmt.Errorf("config: project directory: %w", err)
		}
		user, err := hostconfig.UserPath(envFrom(ctx))
		if err != nil {
			return nil, err
		}
		return hostconfig.Load(root, user)
	}
	check := &cobra.Command{Use: "check", Short: "Validate the files strictly; print the revision, or the first error with file:line: field", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := load(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"revision": s.Revision, "inputs": s.Inputs})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: revision %s\n", s.Revision)
			printInputs(cmd.OutOrStdout(), s.Inputs)
			return nil
		}}
	show := &cobra.Command{Use: "show", Short: "Print the effective configuration with the source of each value", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := load(cmd.Context())
			if err != nil {
				return err
			}
			e := s.Effective(projectID)
			if asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"revision": e.Revision, "inputs": e.Inputs, "values": e.Values(), "paths": e.Paths})
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "revision %s\n", e.Revision)
			printInputs(w, e.Inputs)
			for _, v := range e.Values() {
				fmt.Fprintf(w, "%s = %s\t(%s)\n", termtext.Line(v.Path), termtext.Line(v.Value), termtext.Line(v.Source.String()))
			}
			return nil
		}}
	preview := &cobra.Command{Use: "preview", Short: "Show the route a mission would take (the same selection, no side effect)", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := load(cmd.Context())
			if err != nil {
				return err
			}
			d := s.Effective(projectID).Select(hostconfig.SelectRequest{Model: model, ProjectID: projectID})
			if asJSON {
				return printJSON(cmd.OutOrStdout(), d)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "revision %s, policy %s\nrequested %s\n%s\n", d.Revision, d.PolicyRevision, termtext.Line(orNone(d.Requested)), termtext.Line(d.Reason))
			for i, t := range d.Targets {
				fmt.Fprintf(w, "  %d. %s %s\n", i+1, t.Kind, termtext.Line(t.Name))
			}
			fmt.Fprintf(w, "failover on %v; failure budgets %v\n", d.FailoverOn, d.FailureBudgets)
			return nil
		}}
	preview.Flags().StringVar(&model, "model", "", "the model a request would name")
	cmd.AddCommand(check, show, preview)
	return cmd
}

func printInputs(w io.Writer, ins []hostconfig.InputFile) {
	for _, in := range ins {
		sum := in.SHA256
		if sum == "" {
			sum = "absent"
		}
		fmt.Fprintf(w, "  %s %s %s\n", in.Kind, termtext.Line(in.Path), sum)
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// startHostConfig starts the registry of configuration files the server's
// mission service reads: the user-local file of the user it runs as, and
// each project's .aos/config.yaml, watched for changes.
func startHostConfig(ctx context.Context, log *slog.Logger) (*hostconfig.Registry, error) {
	user, err := hostconfig.UserPath(envFrom(ctx))
	if err != nil {
		return nil, err
	}
	r := hostconfig.NewRegistry(user, log)
	r.OnPublish = func(root string, s *hostconfig.Snapshot) {
		log.Info("configuration revision published", "project", root, "revision", s.Revision)
	}
	if err := r.Start(ctx); err != nil {
		return nil, err
	}
	return r, nil
}
