package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/client"
	"github.com/aos-run/aos/internal/mission"
)

// whereWaits is the --help paragraph on how aos waits/approve/deny/answer
// pick their backend.
const whereWaits = `With a server configured (aos login, or AOS_SERVER), this goes through
the API (GET /waits, POST /waits/{id}/resolve); otherwise through the local
control socket of the aos up running on this data dir, with no login; and
without one it works on the local database directly (AOS_DATABASE_URL or
the data dir), as the local aos run does.`

func (e *clientEnv) newWaitsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "waits",
		Short: "List pending approvals and questions",
		Long:  "List pending approvals and questions.\n\n" + whereWaits,
		Args:  argsUsage(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := e.missionClient(cmd.Context(), true)
			if err != nil {
				return err
			}
			if c == nil {
				return localWaits(cmd, asJSON)
			}
			ws, err := c.ListWaits(cmd.Context(), client.ListWaitsOptions{Status: "pending"})
			if err != nil {
				return classify(err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return printJSON(out, ws)
			}
			if len(ws) == 0 {
				fmt.Fprintln(out, "no pending waits")
				return nil
			}
			printWaits(out, ws)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "JSON output")
	return cmd
}

func localWaits(cmd *cobra.Command, asJSON bool) error {
	s, err := openSession(cmd.Context(), "", cmd.OutOrStdout())
	if err != nil {
		return err
	}
	defer s.close()
	ws, err := s.service().ListWaits(cmd.Context(), mission.ListWaitsRequest{Status: "pending", Limit: 1000})
	if err != nil {
		return missionError(err)
	}
	if asJSON {
		return printJSON(s.out, ws)
	}
	if len(ws) == 0 {
		fmt.Fprintln(s.out, "no pending waits")
	}
	for _, w := range ws {
		fmt.Fprintf(s.out, "%s  %-8s mission %s  %s\n", w.ID, w.Kind, short(w.MissionID), oneLine(string(w.Payload), 120))
	}
	return nil
}

func (e *clientEnv) newResolveCmd(verb string) *cobra.Command {
	var remember, asJSON bool
	var reason string
	use := verb + " WAIT"
	args := cobra.ExactArgs(1)
	summary := map[string]string{"approve": "Approve a pending approval", "deny": "Deny a pending approval", "answer": "Answer a pending question"}[verb]
	if verb == "answer" {
		use, args = "answer WAIT TEXT", cobra.ExactArgs(2)
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: summary,
		Long:  summary + ".\n\n" + whereWaits,
		Args:  argsUsage(args),
		RunE: func(cmd *cobra.Command, a []string) error {
			var res mission.Resolution
			switch verb {
			case "approve", "deny":
				ok := verb == "approve"
				res = mission.Resolution{Approved: &ok, Remember: remember && ok, Reason: reason}
			case "answer":
				res = mission.Resolution{Answer: a[1]}
			}
			c, err := e.missionClient(cmd.Context(), true)
			if err != nil {
				return err
			}
			if c == nil {
				return localResolve(cmd, a[0], res)
			}
			ctx := cmd.Context()
			err = func() error {
				id, err := resolveWait(ctx, c, a[0])
				if err != nil {
					return err
				}
				w, err := c.ResolveWait(ctx, id, res)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(cmd.OutOrStdout(), w)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wait %s %s; run %s goes on\n", w.ID, w.Status, short(w.RunID))
				return nil
			}()
			return classify(err)
		},
	}
	if verb != "answer" {
		cmd.Flags().StringVar(&reason, "reason", "", "a reason the agent reads")
	}
	if verb == "approve" {
		cmd.Flags().BoolVar(&remember, "remember", false, "also allow such calls from now on in this project (a mission without one: its directory)")
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the resolved wait as JSON (API only)")
	return cmd
}

// localResolve resolves a wait on the local database, through the mission
// service as the API does (the same checks, the same audit entry).
func localResolve(cmd *cobra.Command, waitID string, r mission.Resolution) error {
	ctx := cmd.Context()
	s, err := openSession(ctx, "", cmd.OutOrStdout())
	if err != nil {
		return err
	}
	defer s.close()
	return resolveLocal(ctx, s.service(), s.out, waitID, r)
}

// resolveLocal resolves waitID with svc and says what happened on out.
func resolveLocal(ctx context.Context, svc *mission.Service, out io.Writer, waitID string, r mission.Resolution) error {
	w, err := svc.ResolveWait(ctx, localActor(), waitID, r)
	if errors.Is(err, mission.ErrNotFound) {
		return &exitError{code: exitNotFound, msg: "not found: no wait " + waitID}
	}
	if err != nil {
		return missionError(err)
	}
	fmt.Fprintf(out, "wait %s %s; run %s re-queued\n", w.ID, w.Status, w.RunID)
	return nil
}
