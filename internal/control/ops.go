package control

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/user"
	"strconv"
	"time"

	"github.com/aos-run/aos/internal/clients"
	"github.com/aos-run/aos/internal/integrate"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
)

// Operations. Read operations never mutate; mutating ones need a
// command_id.
const (
	OpRuntimeStatus = "runtime.status"
	OpProjectStatus = "project.status"
	OpProjectList   = "project.list"
	OpBlockerList   = "blocker.list"
	OpProcessStatus = "process.status"
	// OpIntegrationStatus reads the change-set integration queues
	// (internal/integrate).
	OpIntegrationStatus = "integration.status"
	OpMissionList       = "mission.list"
	OpMissionShow       = "mission.show"
	OpMissionEvents     = "mission.events"
	opSubscribe         = "events.subscribe"

	OpProjectStart   = "project.start"
	OpProjectStop    = "project.stop"
	OpProjectResume  = "project.resume"
	OpMissionCreate  = "mission.create"
	OpMissionCancel  = "mission.cancel"
	OpMissionMessage = "mission.message"
	OpWaitResolve    = "wait.resolve"

	OpClientStart  = "client.start"
	OpClientStop   = "client.stop"
	OpClientFocus  = "client.focus"
	OpClientDetail = "client.detail"
)

// OpSubscribe opens the event stream on its connection.
const OpSubscribe = opSubscribe

// Arguments of the operations (strict: an unknown field is refused).
type (
	// NoArgs is the arguments of an operation that takes none.
	NoArgs struct{}
	// ProjectArgs names a project.
	ProjectArgs struct {
		ProjectID string `json:"project_id"`
	}
	// ProjectResumeArgs names a project and, optionally, which ended
	// mission of it to resume (its newest not done one by default).
	ProjectResumeArgs struct {
		ProjectID string `json:"project_id"`
		MissionID string `json:"mission_id,omitempty"`
	}
	// IntegrationArgs filter integration.status: a repository's path and a
	// target branch, each optional.
	IntegrationArgs struct {
		Repo   string `json:"repo,omitempty"`
		Target string `json:"target,omitempty"`
	}
	// ClientArgs name a client kind.
	ClientArgs struct {
		Kind string `json:"kind"`
	}
	// ClientDetailArgs route a detail from one client kind to another.
	ClientDetailArgs struct {
		From   string          `json:"from"`
		To     string          `json:"to"`
		Detail json.RawMessage `json:"detail"`
	}
	// MissionArgs names a mission.
	MissionArgs struct {
		MissionID string `json:"mission_id"`
	}
	// MissionListArgs filter mission.list.
	MissionListArgs struct {
		Status    string `json:"status,omitempty"`
		ProjectID string `json:"project_id,omitempty"`
		Limit     int    `json:"limit,omitempty"`
	}
	// BlockerListArgs filter blocker.list (pending waits).
	BlockerListArgs struct {
		MissionID string `json:"mission_id,omitempty"`
	}
	// MissionEventsArgs read a mission's journal after a journal event id.
	MissionEventsArgs struct {
		MissionID string `json:"mission_id"`
		After     int64  `json:"after"`
		Limit     int    `json:"limit,omitempty"`
	}
	// MessageArgs steer a mission's root run.
	MessageArgs struct {
		MissionID string `json:"mission_id"`
		Text      string `json:"text"`
	}
	// ResolveArgs resolve a pending wait.
	ResolveArgs struct {
		WaitID     string             `json:"wait_id"`
		Resolution mission.Resolution `json:"resolution"`
	}
	// SubscribeArgs filter the event stream to one mission ("" all).
	SubscribeArgs struct {
		MissionID string `json:"mission_id,omitempty"`
	}
)

// MissionDetail is mission.show's result.
type MissionDetail struct {
	Mission mission.Mission `json:"mission"`
	Runs    []mission.Run   `json:"runs"`
	Waits   []mission.Wait  `json:"pendingWaits"`
}

// ProjectStatus is project.status's result: the project and its live
// missions.
type ProjectStatus struct {
	Project  mission.Project   `json:"project"`
	Live     []mission.Mission `json:"liveMissions"`
	Blockers []mission.Wait    `json:"blockers"`
}

// ProcessStatus is process.status's result: the daemon process.
type ProcessStatus struct {
	DaemonID  string `json:"daemon_id"`
	PID       int    `json:"pid"`
	StartedAt int64  `json:"started_at"`
	UptimeMs  int64  `json:"uptime_ms"`
	Version   string `json:"version"`
	// Clients are the daemon's client processes (none when it has none).
	Clients []clients.Status `json:"clients"`
}

// RuntimeStatus is runtime.status's result.
type RuntimeStatus struct {
	Process  ProcessStatus  `json:"process"`
	Snapshot Marker         `json:"snapshot"`
	Status   mission.Status `json:"status"`
}

// handler runs one operation on its decoded arguments.
type handler struct {
	mutating bool
	decode   func(json.RawMessage) (any, error)
	run      func(ctx context.Context, s *Server, args any) (any, error)
}

func op[A any](mutating bool, run func(ctx context.Context, s *Server, a A) (any, error)) handler {
	return handler{mutating: mutating,
		decode: func(raw json.RawMessage) (any, error) {
			var a A
			if len(raw) == 0 {
				raw = json.RawMessage(`{}`)
			}
			if err := strict(raw, &a); err != nil {
				return nil, err
			}
			return a, nil
		},
		run: func(ctx context.Context, s *Server, a any) (any, error) { return run(ctx, s, a.(A)) }}
}

// actor names the local owner in the audit log.
func actor() mission.Actor {
	name := strconv.Itoa(os.Geteuid())
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	return mission.Actor("local:" + name)
}

var handlers = map[string]handler{
	OpRuntimeStatus: op(false, func(ctx context.Context, s *Server, _ NoArgs) (any, error) {
		return RuntimeStatus{Process: s.process(), Snapshot: s.marker(), Status: s.opts.Service.Status(ctx)}, nil
	}),
	OpProcessStatus: op(false, func(_ context.Context, s *Server, _ NoArgs) (any, error) { return s.process(), nil }),
	OpIntegrationStatus: op(false, func(ctx context.Context, s *Server, a IntegrationArgs) (any, error) {
		if s.opts.Integrations == nil {
			return []integrate.Queue{}, nil
		}
		return integrate.Queues(ctx, s.opts.Integrations, a.Repo, a.Target)
	}),
	OpProjectList: op(false, func(ctx context.Context, s *Server, _ NoArgs) (any, error) {
		return s.opts.Service.ListProjects(ctx)
	}),
	OpProjectStatus: op(false, func(ctx context.Context, s *Server, a ProjectArgs) (any, error) {
		svc := s.opts.Service
		p, err := svc.GetProject(ctx, a.ProjectID)
		if err != nil {
			return nil, err
		}
		ms, err := svc.ListMissions(ctx, mission.ListMissionsRequest{ProjectID: p.ID, Limit: 1000})
		if err != nil {
			return nil, err
		}
		out := ProjectStatus{Project: p, Live: []mission.Mission{}, Blockers: []mission.Wait{}}
		for _, m := range ms {
			if kernel.IsTerminal(m.Status) {
				continue
			}
			out.Live = append(out.Live, m)
			ws, err := svc.ListWaits(ctx, mission.ListWaitsRequest{Status: "pending", MissionID: m.ID})
			if err != nil {
				return nil, err
			}
			out.Blockers = append(out.Blockers, ws...)
		}
		return out, nil
	}),
	OpBlockerList: op(false, func(ctx context.Context, s *Server, a BlockerListArgs) (any, error) {
		return s.opts.Service.ListWaits(ctx, mission.ListWaitsRequest{Status: "pending", MissionID: a.MissionID, Limit: 1000})
	}),
	OpMissionList: op(false, func(ctx context.Context, s *Server, a MissionListArgs) (any, error) {
		return s.opts.Service.ListMissions(ctx, mission.ListMissionsRequest{Status: a.Status, ProjectID: a.ProjectID, Limit: a.Limit})
	}),
	OpMissionShow: op(false, func(ctx context.Context, s *Server, a MissionArgs) (any, error) {
		svc := s.opts.Service
		var d MissionDetail
		var err error
		if d.Mission, err = svc.GetMission(ctx, a.MissionID); err != nil {
			return nil, err
		}
		if d.Runs, err = svc.ListRuns(ctx, a.MissionID); err != nil {
			return nil, err
		}
		d.Waits, err = svc.ListWaits(ctx, mission.ListWaitsRequest{Status: "pending", MissionID: a.MissionID})
		return d, err
	}),
	OpMissionEvents: op(false, func(ctx context.Context, s *Server, a MissionEventsArgs) (any, error) {
		if a.MissionID == "" {
			return nil, &mission.Error{Code: mission.CodeInvalidInput, Msg: "mission_id is required"}
		}
		if a.Limit == 0 {
			a.Limit = 500
		}
		return s.opts.Service.ReplayEvents(ctx, a.After, a.MissionID, min(a.Limit, 1000))
	}),

	OpMissionCreate: op(true, func(ctx context.Context, s *Server, a mission.CreateRequest) (any, error) {
		return createOnce(ctx, s, a)
	}),
	OpProjectStart: op(true, func(ctx context.Context, s *Server, a mission.CreateRequest) (any, error) {
		if a.ProjectID == "" {
			return nil, &mission.Error{Code: mission.CodeInvalidInput, Msg: "project.start needs projectId"}
		}
		return createOnce(ctx, s, a)
	}),
	OpClientStart: op(true, func(_ context.Context, s *Server, a ClientArgs) (any, error) {
		return clientCall(s, func(m *clients.Manager) (clients.Status, error) { return m.Start(a.Kind) })
	}),
	OpClientStop: op(true, func(_ context.Context, s *Server, a ClientArgs) (any, error) {
		return clientCall(s, func(m *clients.Manager) (clients.Status, error) { return m.Stop(a.Kind) })
	}),
	OpClientFocus: op(true, func(_ context.Context, s *Server, a ClientArgs) (any, error) {
		return clientCall(s, func(m *clients.Manager) (clients.Status, error) { return m.Focus(a.Kind) })
	}),
	OpClientDetail: op(true, func(ctx context.Context, s *Server, a ClientDetailArgs) (any, error) {
		return clientCall(s, func(m *clients.Manager) (clients.Status, error) {
			ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			return m.Detail(ctx, a.From, a.To, a.Detail)
		})
	}),
	OpMissionCancel: op(true, func(ctx context.Context, s *Server, a MissionArgs) (any, error) {
		return s.opts.Service.CancelMission(ctx, actor(), a.MissionID)
	}),
	OpProjectStop: op(true, func(ctx context.Context, s *Server, a ProjectArgs) (any, error) {
		svc := s.opts.Service
		p, err := svc.GetProject(ctx, a.ProjectID)
		if err != nil {
			return nil, err
		}
		ms, err := svc.ListMissions(ctx, mission.ListMissionsRequest{ProjectID: p.ID, Limit: 1000})
		if err != nil {
			return nil, err
		}
		out := []mission.Mission{}
		for _, m := range ms {
			if kernel.IsTerminal(m.Status) {
				continue
			}
			c, err := svc.CancelMission(ctx, actor(), m.ID)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}),
	OpProjectResume: op(true, func(ctx context.Context, s *Server, a ProjectResumeArgs) (any, error) {
		svc := s.opts.Service
		p, err := svc.GetProject(ctx, a.ProjectID)
		if err != nil {
			return nil, err
		}
		id := a.MissionID
		if id == "" {
			ms, err := svc.ListMissions(ctx, mission.ListMissionsRequest{ProjectID: p.ID, Limit: 1000})
			if err != nil {
				return nil, err
			}
			for _, m := range ms {
				if kernel.IsTerminal(m.Status) && m.Status != kernel.StatusDone {
					id = m.ID
					break
				}
			}
			if id == "" {
				return nil, &mission.Error{Code: mission.CodeConflict, Msg: "the project has no ended, unfinished mission to resume"}
			}
		} else if m, err := svc.GetMission(ctx, id); err != nil {
			return nil, err
		} else if m.ProjectID != p.ID {
			return nil, &mission.Error{Code: mission.CodeInvalidInput, Msg: "the mission is not the project's"}
		}
		return svc.RetryMission(ctx, actor(), id)
	}),
	OpMissionMessage: op(true, func(ctx context.Context, s *Server, a MessageArgs) (any, error) {
		m, err := s.opts.Service.GetMission(ctx, a.MissionID)
		if err != nil {
			return nil, err
		}
		id, err := s.opts.Service.PostMessage(ctx, actor(), m.RootRunID, a.Text)
		return map[string]int64{"id": id}, err
	}),
	OpWaitResolve: op(true, func(ctx context.Context, s *Server, a ResolveArgs) (any, error) {
		return s.opts.Service.ResolveWait(ctx, actor(), a.WaitID, a.Resolution)
	}),
}

func (s *Server) process() ProcessStatus {
	ps := ProcessStatus{DaemonID: s.id, PID: os.Getpid(), StartedAt: s.started.UnixMilli(), UptimeMs: time.Since(s.started).Milliseconds(), Version: s.opts.Version,
		Clients: []clients.Status{}}
	if s.opts.Clients != nil {
		ps.Clients = s.opts.Clients.Status()
	}
	return ps
}

// dispatch runs a request: the operation must be known, the payload and
// its arguments strict, a mutation carries a command_id.
func (s *Server) dispatch(ctx context.Context, env Envelope) (Response, *Error) {
	h, ok := handlers[env.Operation]
	if !ok {
		return Response{}, errorf(CodeUnsupportedOperation, "operation %q is not supported", bound(env.Operation, 64))
	}
	var req Request
	if len(env.Payload) > 0 {
		if err := strict(env.Payload, &req); err != nil {
			return Response{}, errorf(CodeMalformedFrame, "request payload: %s", safeJSONError(err))
		}
	}
	if req.Cursor != nil {
		return Response{}, errorf(CodeMalformedFrame, "a cursor is taken by %s only", opSubscribe)
	}
	args, err := h.decode(req.Args)
	if err != nil {
		return Response{}, errorf(CodeMalformedFrame, "arguments of %s: %s", env.Operation, safeJSONError(err))
	}
	if !h.mutating {
		if req.CommandID != "" {
			return Response{}, errorf(CodeMalformedFrame, "command_id is for mutating operations")
		}
		res, err := h.run(ctx, s, args)
		if err != nil {
			return Response{}, s.serviceError(err)
		}
		b, err := json.Marshal(res)
		if err != nil {
			return Response{}, s.internal("encode result", err)
		}
		return Response{Result: b}, nil
	}
	ctx = context.WithValue(ctx, commandIDKey{}, req.CommandID)
	return s.mutate(ctx, env.Operation, req.CommandID, req.Args, func() (any, error) { return h.run(ctx, s, args) })
}

// serviceError maps a mission error to its code with its safe message;
// anything else is internal.
func (s *Server) serviceError(err error) *Error {
	var ce *Error
	if errors.As(err, &ce) {
		return ce
	}
	var me *mission.Error
	if !errors.As(err, &me) {
		return s.internal("operation", err)
	}
	msg := me.Msg
	if msg == "" {
		msg = string(me.Code)
	}
	switch me.Code {
	case mission.CodeInvalidInput:
		return errorf(CodeInvalidArgument, "%s", msg)
	case mission.CodeNotFound:
		return errorf(CodeNotFound, "%s", msg)
	case mission.CodeUnauthorized, mission.CodeForbidden:
		return errorf(CodePermissionDenied, "%s", msg)
	}
	// conflict, wait_not_pending, run_ended, daily cap, git: the state
	// refuses the command.
	return errorf(CodeInvalidState, "%s: %s", me.Code, msg)
}

// internal logs err with a correlation id and returns a safe error.
func (s *Server) internal(doing string, err error) *Error {
	corr := "c_" + randomID()[:12]
	s.log.Error("control: internal failure", "doing", doing, "correlation", corr, "err", err.Error())
	return &Error{Code: CodeInternal, Message: "internal failure (" + corr + "); see the server log", Retryable: true}
}

// commandIDKey is the context key of the command_id a mutation runs under.
type commandIDKey struct{}

// createOnce creates a mission keyed by the request's command_id
// (mission.Service.CreateMissionOnce): the mission's row is the command's
// outcome, in the same transaction, so a command left pending by a crash
// is settled by running it again (onceOps).
func createOnce(ctx context.Context, s *Server, a mission.CreateRequest) (any, error) {
	id, _ := ctx.Value(commandIDKey{}).(string)
	m, _, err := s.opts.Service.CreateMissionOnce(ctx, actor(), "control:"+id, a)
	return m, err
}

// onceOps are the mutations that are idempotent by their command_id
// (createOnce): a record left pending by a crash is settled by running the
// command again, which finds what the first run made or makes it once.
var onceOps = map[string]bool{OpMissionCreate: true, OpProjectStart: true}

// clientCall runs a client operation on the daemon's client manager and
// maps its refusals onto the service's (so a refused command leaves no
// command record, and the codes match the other operations').
func clientCall(s *Server, fn func(*clients.Manager) (clients.Status, error)) (any, error) {
	if s.opts.Clients == nil {
		return nil, &mission.Error{Code: mission.CodeNotFound, Msg: "this daemon declares no client programs"}
	}
	st, err := fn(s.opts.Clients)
	var ce *clients.Error
	if errors.As(err, &ce) {
		code := map[clients.Code]mission.Code{clients.CodeInvalid: mission.CodeInvalidInput, clients.CodeUnknownKind: mission.CodeNotFound,
			clients.CodeInvalidState: mission.CodeConflict, clients.CodeNotAllowed: mission.CodeForbidden}[ce.Code]
		return nil, &mission.Error{Code: code, Msg: ce.Msg}
	}
	return st, err
}
