package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/client"
)

// newMissionRetryCmd is `aos mission retry ID [--watch]`: a new mission
// from an ended one's spec (objective, criteria, project, model, budgets).
func (e *clientEnv) newMissionRetryCmd() *cobra.Command {
	var asJSON, watch bool
	cmd := &cobra.Command{
		Use:   "retry ID [--watch]",
		Short: "Start a new mission with an ended mission's objective, criteria, project, model and budgets",
		Long: `Start a new mission from an ended one (blocked for want of an API key,
out of budget, failed, cancelled, or done and worth another go). The ended
mission stays as it was; the new one gets fresh budgets of the same size
and passes the same checks as aos mission create (the daily cap among
them). A mission still running is refused: cancel it first.`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			id, err := resolveMission(ctx, c, args[0])
			if err != nil {
				return err
			}
			m, err := c.RetryMission(ctx, id)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			switch {
			case asJSON && !watch:
				return printJSON(out, m)
			case !asJSON:
				fmt.Fprintf(out, "mission %s created from %s (%s, %s)\n", m.ID, id, m.Status, orDash(m.Model))
			}
			if !watch {
				fmt.Fprintf(out, "watch it: aos mission watch %s\n", m.ID)
				return nil
			}
			return e.watch(ctx, cmd, c, m.ID, asJSON)
		}),
	}
	cmd.Flags().BoolVar(&watch, "watch", false, "follow the new mission to its end (exit code as aos mission watch)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the new mission as JSON (with --watch: the events as JSON lines)")
	return cmd
}
