package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/client"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/termtext"
)

func (e *clientEnv) newMissionWatchCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "watch ID",
		Short: "Follow a mission's timeline live until it ends; exit 0 done, 6 partial, 7 blocked/failed/out of budget, 130 cancelled",
		Long: `Follow a mission's timeline over the events WebSocket, from its first
event, until the mission ends. A dropped connection is re-dialled with
backoff from the last event received: nothing is printed twice or skipped.
Pending approvals and questions are printed with the aos approve, deny or
answer command that resolves them. Ctrl-C stops watching; the mission goes
on.

Exit codes: 0 done, 6 partial, 7 blocked, failed or out of budget,
130 cancelled (or interrupted), and the client's codes (docs/CLI.md).`,
		Args: argsUsage(cobra.ExactArgs(1)),
		RunE: e.missionRunE(func(ctx context.Context, cmd *cobra.Command, c missionAPI, args []string) error {
			id, err := resolveMission(ctx, c, args[0])
			if err != nil {
				return err
			}
			return e.watch(ctx, cmd, c, id, asJSON)
		}),
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each event as a JSON line (the API's frames) instead of the timeline")
	return cmd
}

// watcher prints one mission's live timeline from the events socket.
type watcher struct {
	c         missionAPI
	out, err  io.Writer
	pr        *eventPrinter
	json      bool
	missionID string
	rootRun   string
	status    string // the mission's final status, once known
	gate      *liveGate
}

// watch follows missionID until it ends or ctx (Ctrl-C) stops it.
func (e *clientEnv) watch(ctx context.Context, cmd *cobra.Command, c missionAPI, missionID string, asJSON bool) error {
	ctx, stop := signalContext(ctx)
	defer stop()
	m, err := c.GetMission(ctx, missionID)
	if err != nil {
		return err
	}
	w := &watcher{c: c, out: cmd.OutOrStdout(), err: cmd.ErrOrStderr(), pr: &eventPrinter{out: cmd.OutOrStdout(), quiet: asJSON},
		json: asJSON, missionID: m.ID, rootRun: m.RootRunID, gate: newLiveGate()}
	if !asJSON {
		w.gate.copies = map[string]bool{} // --json shows every event, live copies and persisted ones
	}
	err = c.Follow(ctx, client.FollowOptions{MissionID: m.ID, OnEvent: func(e mission.Event) error { return w.event(ctx, e) }, MinBackoff: e.followBackoff,
		OnReconnect: func(cause error, cursor int64) {
			fmt.Fprintf(w.err, "aos: events connection lost (%s); resuming after event %d\n", oneLine(cause.Error(), 160), cursor)
		}})
	w.pr.printf("")
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &exitError{code: exitCancelled, msg: "stopped watching; the mission goes on: aos mission watch " + m.ID}
		}
		return err
	}
	return outcome(m.ID, w.status)
}

// outcome turns a mission's final status into watch's exit code.
func outcome(id, status string) error {
	switch code := statusExit(status); code {
	case exitOK:
		return nil
	case exitCancelled:
		return &exitError{code: code, msg: "mission " + id + " was cancelled"}
	default:
		return &exitError{code: code, msg: "mission " + id + " ended " + status}
	}
}

// event shows e, and the live model text it releases, in timeline order.
func (w *watcher) event(ctx context.Context, e mission.Event) error {
	for _, x := range w.gate.admit(e) {
		if err := w.show(ctx, x); err != nil {
			return err
		}
	}
	return nil
}

func (w *watcher) show(ctx context.Context, e mission.Event) error {
	if w.json {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		fmt.Fprintf(w.out, "%s\n", termtext.JSON(b))
	}
	p := payloadOf(e.Payload)
	switch e.Kind {
	case "wait.created":
		return w.waitCreated(ctx, str(p, "waitId"), str(p, "kind"), p["payload"])
	case "run.completed":
		if e.RunID != w.rootRun {
			return nil
		}
		w.status = str(p, "status")
		w.pr.printf("■ %s — %s\n", w.status, str(p, "summary"))
		return client.ErrStop
	case "system.notice":
		var n api.Notice
		_ = json.Unmarshal(e.Payload, &n)
		if n.Code == "gap" || n.Code == api.NoticeCursorExpired {
			// Events were skipped (more than api.MaxReplay, or pruned by
			// retention): the mission may have ended among them, so ask.
			if n.Code == "gap" {
				w.pr.printf("  ℹ %d+ events not replayed; going on live from event %d\n", api.MaxReplay, n.LatestID)
			} else {
				w.pr.printf("  ℹ older events were pruned by retention; going on live from event %d\n", n.LatestID)
			}
			m, err := w.c.GetMission(ctx, w.missionID)
			if err != nil {
				return err
			}
			if kernel.IsTerminal(m.Status) {
				w.status = m.Status
				w.pr.printf("■ %s\n", m.Status)
				return client.ErrStop
			}
			return nil
		}
	}
	w.pr.render(w.missionID, e.Kind, e.Payload)
	return nil
}

// waitCreated prints a wait that is still pending with the commands that
// resolve it (a replayed, already resolved one prints nothing).
func (w *watcher) waitCreated(ctx context.Context, waitID, kind string, payload json.RawMessage) error {
	ws, err := w.c.ListWaits(ctx, client.ListWaitsOptions{Status: "pending", MissionID: w.missionID})
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(ws, func(x mission.Wait) bool { return x.ID == waitID }) {
		return nil
	}
	w.pr.printWait(waitID, kind, payload, true)
	return nil
}
