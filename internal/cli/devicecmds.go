package cli

import (
	"context"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/client"
	"github.com/aos-run/aos/internal/termtext"
)

// newDeviceCmd returns `aos device pair|ls|revoke`: paired devices (seed
// 000's device channel), through the API.
func (e *clientEnv) newDeviceCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "device", Short: "Pair, list and revoke devices (phones, robots, apps) that use the device channel"}
	var name string
	var asJSON, noQR bool
	pair := &cobra.Command{
		Use:   "pair [--name NAME]",
		Short: "Show a one-time pairing code, its aos:// URL and a QR code; the device exchanges it for a device token",
		Args:  argsUsage(cobra.NoArgs),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, _ []string) error {
			p, err := c.PairDevice(ctx, name)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), p)
			}
			out := cmd.OutOrStdout()
			left := time.Until(time.UnixMilli(p.ExpiresAt)).Round(time.Second)
			fmt.Fprintf(out, "pairing code for %s: %s (single use, expires in %s)\n", termtext.Line(p.Name), p.Code, left)
			fmt.Fprintf(out, "URL: %s\n", termtext.Line(p.URL))
			if f, ok := out.(*os.File); ok && isTTY(f) && !noQR {
				if err := writeQR(out, p.URL); err != nil {
					return err
				}
			}
			fmt.Fprintln(out, "The device sends the code to POST /api/v1/device/pair and keeps the token it gets; see docs/DEVICES.md.")
			return nil
		}),
	}
	pair.Flags().StringVar(&name, "name", "device", "the device's name, shown in aos device ls")
	pair.Flags().BoolVar(&asJSON, "json", false, "print the API's JSON")
	pair.Flags().BoolVar(&noQR, "no-qr", false, "do not draw the QR code")
	var lsJSON bool
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List paired devices, revoked ones too",
		Args:  argsUsage(cobra.NoArgs),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, _ []string) error {
			ds, err := c.ListDevices(ctx)
			if err != nil {
				return err
			}
			if lsJSON {
				return printJSON(cmd.OutOrStdout(), ds)
			}
			if len(ds) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no devices")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tPAIRED\tLAST SEEN\tSTATE")
			for _, d := range ds {
				state := fmt.Sprintf("live, %d connected", d.Connected)
				if d.RevokedAt != 0 {
					state = "revoked " + when(d.RevokedAt)
				}
				seen := "-"
				if d.LastSeenAt != 0 {
					seen = when(d.LastSeenAt)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.ID, termtext.Line(d.Name), when(d.CreatedAt), seen, state)
			}
			return tw.Flush()
		}),
	}
	ls.Flags().BoolVar(&lsJSON, "json", false, "print the API's JSON")
	revoke := &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a device: its token stops working, its connections close, its preparations stop at the next step; nothing is deleted",
		Args:  argsUsage(cobra.ExactArgs(1)),
		RunE: e.remoteRunE(func(ctx context.Context, cmd *cobra.Command, c *client.Client, args []string) error {
			if err := c.RevokeDevice(ctx, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "device %s revoked; what it prepared stays on this machine\n", termtext.Line(args[0]))
			return nil
		}),
	}
	cmd.AddCommand(pair, ls, revoke)
	return cmd
}
