package cli

import (
	"context"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/client"
)

// newInboxCmd is `aos inbox` (the owner's notifications: approvals and
// questions waiting, missions that ended) and `aos inbox read [ID…]`.
func (e *clientEnv) newInboxCmd() *cobra.Command {
	var all, asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "inbox [--all] [--limit N]",
		Short: "Show unread notifications: approvals and questions waiting, missions that ended",
		Args:  argsUsage(cobra.NoArgs),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, _ []string) error {
			ns, err := c.ListNotifications(ctx, !all, limit)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printJSON(out, ns)
			}
			if len(ns) == 0 {
				fmt.Fprintln(out, "no unread notifications")
				return nil
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tWHEN\tKIND\tMISSION\tTITLE")
			for _, n := range ns {
				mark := ""
				if !n.Read {
					mark = " *"
				}
				fmt.Fprintf(tw, "%d%s\t%s\t%s\t%s\t%s\n", n.ID, mark, when(n.At), n.Kind, short(n.MissionID), oneLine(n.Title, 80))
			}
			return tw.Flush()
		}),
	}
	cmd.Flags().BoolVar(&all, "all", false, "read ones too")
	cmd.Flags().IntVar(&limit, "limit", 0, "at most this many (the server's default, 50, when 0)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	var readJSON bool
	read := &cobra.Command{
		Use:   "read [ID...]",
		Short: "Mark notifications read: the ids given, or all of them",
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			ids := make([]int64, 0, len(args))
			for _, a := range args {
				id, err := strconv.ParseInt(a, 10, 64)
				if err != nil || id <= 0 {
					return usage("%q is not a notification id (a positive number, as aos inbox shows)", a)
				}
				ids = append(ids, id)
			}
			res, err := c.MarkNotificationsRead(ctx, ids)
			if err != nil {
				return err
			}
			if readJSON {
				return printJSON(cmd.OutOrStdout(), res)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d marked read\n", res.Marked)
			return nil
		}),
	}
	read.Flags().BoolVar(&readJSON, "json", false, "print the API's JSON")
	cmd.AddCommand(read)
	return cmd
}
