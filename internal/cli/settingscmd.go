package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/termtext"
)

// newSettingsCmd returns `aos settings [set …]`: the owner's settings, on
// the database directly (local administrator), audited like the API.
func newSettingsCmd() *cobra.Command {
	var asJSON bool
	show := func(cmd *cobra.Command, st mission.Settings) error {
		if asJSON {
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(st)
		}
		printSettings(cmd.OutOrStdout(), st)
		return nil
	}
	cmd := &cobra.Command{
		Use:   "settings",
		Short: "Show the settings (daily cap, mission defaults); `aos settings set` changes them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withService(cmd.Context(), func(ctx context.Context, svc *mission.Service) error {
				st, err := svc.GetSettings(ctx)
				if err != nil {
					return err
				}
				return show(cmd, st)
			})
		},
	}
	var daily, budget float64
	var turns, evDays, auDays int
	var model, effort, localBase string
	set := &cobra.Command{
		Use:   "set",
		Short: "Change settings: only the flags given are written",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var in mission.Settings
			f := cmd.Flags()
			if f.Changed("daily-budget-usd") {
				in.DailyBudgetUSD = &daily
			}
			if f.Changed("default-budget-usd") {
				in.DefaultBudgetUSD = &budget
			}
			if f.Changed("default-max-turns") {
				in.DefaultMaxTurns = &turns
			}
			if f.Changed("default-model") {
				in.DefaultModel = &model
			}
			if f.Changed("default-effort") {
				in.DefaultEffort = &effort
			}
			if f.Changed("local-base-url") {
				in.LocalBaseURL = &localBase
			}
			if f.Changed("retention-events-days") {
				in.RetentionEventsDays = &evDays
			}
			if f.Changed("retention-audit-days") {
				in.RetentionAuditDays = &auDays
			}
			if in == (mission.Settings{}) {
				return fmt.Errorf("settings set: give at least one flag (see --help)")
			}
			return withService(cmd.Context(), func(ctx context.Context, svc *mission.Service) error {
				st, err := svc.PutSettings(ctx, localActor(), in)
				if err != nil {
					return err
				}
				return show(cmd, st)
			})
		},
	}
	set.Flags().Float64Var(&daily, "daily-budget-usd", 0, "daily spend cap across all missions, USD (0: none)")
	set.Flags().Float64Var(&budget, "default-budget-usd", 0, "default USD budget of a mission created through the API")
	set.Flags().IntVar(&turns, "default-max-turns", 0, "default turn budget of a mission created through the API")
	set.Flags().StringVar(&model, "default-model", "", "default model of a mission created through the API")
	set.Flags().StringVar(&effort, "default-effort", "", "default effort: low, medium, high, xhigh or max")
	set.Flags().StringVar(&localBase, "local-base-url", "", "OpenAI-compatible endpoint of local:NAME models, e.g. http://127.0.0.1:11434/v1 (wins over AOS_LOCAL_BASE_URL; \"\" clears it)")
	set.Flags().IntVar(&evDays, "retention-events-days", 0, "prune the events of missions ended more than this many days ago (aos server, hourly; 0: keep all)")
	set.Flags().IntVar(&auDays, "retention-audit-days", 0, "prune the audit records of missions ended more than this many days ago (0: keep all)")
	cmd.PersistentFlags().BoolVar(&asJSON, "json", false, "print the settings as JSON")
	cmd.AddCommand(set)
	return cmd
}

// printSettings writes the settings for a person: one aligned line each,
// "not set" where the owner has chosen nothing.
func printSettings(w io.Writer, st mission.Settings) {
	usd := func(v *float64, zero string) string {
		if v == nil {
			return "not set"
		}
		if *v == 0 && zero != "" {
			return zero
		}
		return fmt.Sprintf("$%.2f", *v)
	}
	str := func(v *string) string {
		if v == nil || *v == "" {
			return "not set"
		}
		return termtext.Line(*v)
	}
	days := func(v *int) string {
		if v == nil || *v == 0 {
			return "forever"
		}
		return fmt.Sprintf("%d days after a mission ends", *v)
	}
	turns := "not set"
	if st.DefaultMaxTurns != nil {
		turns = fmt.Sprintf("%d", *st.DefaultMaxTurns)
	}
	for _, row := range [][2]string{
		{"daily budget", usd(st.DailyBudgetUSD, "no cap")},
		{"default model", str(st.DefaultModel)},
		{"default effort", str(st.DefaultEffort)},
		{"default budget", usd(st.DefaultBudgetUSD, "")},
		{"default max turns", turns},
		{"local base URL", str(st.LocalBaseURL)},
		{"events kept", days(st.RetentionEventsDays)},
		{"audit kept", days(st.RetentionAuditDays)},
	} {
		fmt.Fprintf(w, "%-18s %s\n", row[0]+":", row[1])
	}
}
