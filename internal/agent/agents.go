package agent

import (
	"context"
	"errors"
	"os"

	"github.com/aos-run/aos/internal/store"
)

// agentView is an agent as seed 000 shows it. Its runtime is ready when
// its creating operation is ready and its workspace and project still
// hold, starting while that operation runs, and unavailable otherwise.
func (s *Service) agentView(ctx context.Context, a store.AgentRecord) Agent {
	pkg, ws := a.PackageID, a.Workspace
	v := Agent{AgentID: a.ID, MachineID: s.machineID, PackageID: &pkg, Engine: a.Engine, Workspace: &ws, Runtime: RuntimeUnavailable}
	op, err := s.st.GetAgentOperation(ctx, a.OperationID)
	if err == nil {
		v.State = op.State
	}
	switch {
	case err != nil:
	case op.State == StateRunning || op.State == StateAccepted:
		v.Runtime = RuntimeStarting
	case op.State == StateReady:
		if rerr := s.recheck(ctx, a.ID, a.OperationID); rerr != nil {
			var e *Error
			errors.As(rerr, &e)
			v.Error = &OpError{Code: e.Code, Message: e.Message}
		} else {
			v.Runtime = RuntimeReady
		}
	default:
		if op.ErrorCode != "" {
			v.Error = &OpError{Code: op.ErrorCode, Message: op.ErrorMessage}
		}
	}
	if _, err := os.Stat(a.Workspace); err != nil && v.Error == nil {
		v.Runtime = RuntimeUnavailable
		v.Error = &OpError{Code: CodeAgentUnavailable, Message: "the workspace is gone"}
	}
	return v
}

// ListAgents returns every agent, oldest first, read a keyset page at a
// time (store.MaxAgentPage).
func (s *Service) ListAgents(ctx context.Context) ([]Agent, error) {
	out := []Agent{}
	var after store.AgentCursor
	for {
		as, err := s.st.ListAgents(ctx, store.ListAgentsParams{After: after, Limit: store.MaxAgentPage})
		if err != nil {
			return nil, storageErr("list agents", err)
		}
		for _, a := range as {
			out = append(out, s.agentView(ctx, a))
		}
		if len(as) < store.MaxAgentPage {
			return out, nil
		}
		last := as[len(as)-1]
		after = store.AgentCursor{CreatedAt: last.CreatedAt, ID: last.ID}
	}
}

// GetAgent returns one agent.
func (s *Service) GetAgent(ctx context.Context, id string) (Agent, error) {
	a, err := s.st.GetAgent(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Agent{}, errf(CodeAgentNotFound, "no agent "+id)
	}
	if err != nil {
		return Agent{}, storageErr("read the agent", err)
	}
	return s.agentView(ctx, a), nil
}
