package cli

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/client"
	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/control"
	"github.com/aos-run/aos/internal/mission"
)

// missionAPI is what the mission and wait commands need of a server: the
// HTTP API (*client.Client) or, on this machine, the control socket
// (localAPI).
type missionAPI interface {
	ListProjects(ctx context.Context) ([]mission.Project, error)
	ListMissions(ctx context.Context, o client.ListMissionsOptions) ([]mission.Mission, error)
	CreateMission(ctx context.Context, req mission.CreateRequest) (mission.Mission, error)
	GetMission(ctx context.Context, id string) (mission.Mission, error)
	CancelMission(ctx context.Context, id string) (mission.Mission, error)
	ListRuns(ctx context.Context, missionID string) ([]mission.Run, error)
	PostMessage(ctx context.Context, runID, text string) (api.MessageResponse, error)
	ListWaits(ctx context.Context, o client.ListWaitsOptions) ([]mission.Wait, error)
	ResolveWait(ctx context.Context, id string, r mission.Resolution) (mission.Wait, error)
	Follow(ctx context.Context, o client.FollowOptions) error
}

// missionClient picks the transport: with no server configured (no
// stored login, no AOS_SERVER) and an aos up answering on this data dir's
// control socket, the socket, with no token; otherwise the API. It returns
// nil, nil when neither is there and local is allowed (the wait commands
// then use the database).
func (e *clientEnv) missionClient(ctx context.Context, local bool) (missionAPI, error) {
	remote, err := e.remoteConfigured()
	if err != nil {
		return nil, err
	}
	if !remote {
		if cfg, err := config.FromEnv(e.getenv); err == nil {
			c := control.NewClient(control.SocketPath(cfg.DataDir))
			if c.Available(ctx) {
				return &localAPI{c: c}, nil
			}
		}
		if local {
			return nil, nil
		}
	}
	c, err := e.client()
	if err != nil {
		return nil, err
	}
	return c, nil
}

// missionRunE is remoteRunE over missionClient.
func (e *clientEnv) missionRunE(fn func(ctx context.Context, cmd *cobra.Command, c missionAPI, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		c, err := e.missionClient(cmd.Context(), false)
		if err != nil {
			return err
		}
		return classify(fn(cmd.Context(), cmd, c, args))
	}
}

// localAPI is missionAPI over the control socket. Each mutation has a
// command_id of its own, reused when the call is retried after a lost
// connection, so a retry never mutates twice.
type localAPI struct{ c *control.Client }

// call runs op, retrying once with the same command_id when the
// connection failed (not when the daemon answered).
func (l *localAPI) call(ctx context.Context, op string, mutating bool, args, out any) error {
	id := ""
	if mutating {
		id = control.NewCommandID()
	}
	err := l.c.Call(ctx, op, id, args, out)
	var ce *control.Error
	if err != nil && !errors.As(err, &ce) && ctx.Err() == nil {
		err = l.c.Call(ctx, op, id, args, out)
	}
	return localError(err)
}

// localError gives control errors the API client's error type, so the
// commands' exit codes stay the same.
func localError(err error) error {
	var ce *control.Error
	if !errors.As(err, &ce) {
		if err != nil && !errors.Is(err, context.Canceled) {
			return &exitError{code: exitUnreachable, msg: "the local aos (control socket) failed: " + oneLine(err.Error(), 200)}
		}
		return err
	}
	status := map[string]int{control.CodeInvalidArgument: http.StatusBadRequest, control.CodeMalformedFrame: http.StatusBadRequest,
		control.CodeNotFound: http.StatusNotFound, control.CodePermissionDenied: http.StatusForbidden,
		control.CodeInvalidState: http.StatusConflict, control.CodeCommandIDConflict: http.StatusConflict}[ce.Code]
	if status == 0 {
		status = http.StatusInternalServerError
	}
	return &client.Error{Status: status, Code: ce.Code, Message: ce.Message}
}

func (l *localAPI) ListProjects(ctx context.Context) (ps []mission.Project, err error) {
	return ps, l.call(ctx, control.OpProjectList, false, nil, &ps)
}

func (l *localAPI) ListMissions(ctx context.Context, o client.ListMissionsOptions) (ms []mission.Mission, err error) {
	return ms, l.call(ctx, control.OpMissionList, false, control.MissionListArgs{Status: o.Status, ProjectID: o.ProjectID, Limit: o.Limit}, &ms)
}

func (l *localAPI) CreateMission(ctx context.Context, req mission.CreateRequest) (m mission.Mission, err error) {
	return m, l.call(ctx, control.OpMissionCreate, true, req, &m)
}

func (l *localAPI) GetMission(ctx context.Context, id string) (mission.Mission, error) {
	var d control.MissionDetail
	err := l.call(ctx, control.OpMissionShow, false, control.MissionArgs{MissionID: id}, &d)
	return d.Mission, err
}

func (l *localAPI) CancelMission(ctx context.Context, id string) (m mission.Mission, err error) {
	return m, l.call(ctx, control.OpMissionCancel, true, control.MissionArgs{MissionID: id}, &m)
}

func (l *localAPI) ListRuns(ctx context.Context, missionID string) ([]mission.Run, error) {
	var d control.MissionDetail
	err := l.call(ctx, control.OpMissionShow, false, control.MissionArgs{MissionID: missionID}, &d)
	return d.Runs, err
}

// PostMessage steers the mission whose root run is runID.
func (l *localAPI) PostMessage(ctx context.Context, runID, text string) (api.MessageResponse, error) {
	ms, err := l.ListMissions(ctx, client.ListMissionsOptions{Limit: 1000})
	if err != nil {
		return api.MessageResponse{}, err
	}
	for _, m := range ms {
		if m.RootRunID == runID {
			var r api.MessageResponse
			return r, l.call(ctx, control.OpMissionMessage, true, control.MessageArgs{MissionID: m.ID, Text: text}, &r)
		}
	}
	return api.MessageResponse{}, &client.Error{Status: http.StatusNotFound, Code: control.CodeNotFound, Message: "no mission has that run"}
}

func (l *localAPI) ListWaits(ctx context.Context, o client.ListWaitsOptions) (ws []mission.Wait, err error) {
	if o.Status != "pending" {
		return nil, &client.Error{Status: http.StatusBadRequest, Code: control.CodeInvalidArgument, Message: "the local socket lists pending waits only"}
	}
	return ws, l.call(ctx, control.OpBlockerList, false, control.BlockerListArgs{MissionID: o.MissionID}, &ws)
}

func (l *localAPI) ResolveWait(ctx context.Context, id string, r mission.Resolution) (w mission.Wait, err error) {
	return w, l.call(ctx, control.OpWaitResolve, true, control.ResolveArgs{WaitID: id, Resolution: r}, &w)
}

// Follow streams o.MissionID's events after o.Cursor: it subscribes, reads
// the journal up to the subscription's snapshot marker, then takes live
// events, skipping what the journal gave. A lost connection resumes from
// the event cursor; replay_unavailable starts over from a snapshot (the
// journal after the last event delivered), so nothing is skipped or
// delivered twice.
func (l *localAPI) Follow(ctx context.Context, o client.FollowOptions) error {
	last := o.Cursor
	var cursor *control.Marker
	backoff := max(o.MinBackoff, 100*time.Millisecond)
	deliver := func(e mission.Event) error {
		if e.ID <= last {
			return nil
		}
		last = e.ID
		return o.OnEvent(e)
	}
	for {
		err := l.c.Subscribe(ctx, o.MissionID, cursor, func(m control.Marker) error {
			if cursor != nil {
				return nil // a replay follows
			}
			for last < m.JournalEventID {
				var es []mission.Event
				if err := l.c.Call(ctx, control.OpMissionEvents, "", control.MissionEventsArgs{MissionID: o.MissionID, After: last, Limit: 500}, &es); err != nil {
					return err
				}
				if len(es) == 0 {
					break
				}
				for _, e := range es {
					if err := deliver(e); err != nil {
						return err
					}
				}
			}
			cursor = &control.Marker{DaemonID: m.DaemonID, EventSequence: m.EventSequence}
			return nil
		}, func(seq uint64, e control.Event) error {
			cursor.EventSequence = seq
			return deliver(e.Event)
		})
		switch {
		case errors.Is(err, client.ErrStop):
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, &control.Error{Code: control.CodeReplayUnavailable}):
			cursor = nil // snapshot recovery from the journal
		default:
			var ce *control.Error
			if errors.As(err, &ce) {
				return localError(err)
			}
		}
		if o.OnReconnect != nil {
			o.OnReconnect(err, last)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
}
