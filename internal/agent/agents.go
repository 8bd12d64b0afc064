package agent

import (
	"context"
	"errors"
	"fmt"
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
		// The row in hand is the agent's: recheck only what it names.
		if rerr := s.recheckRecord(ctx, a); rerr != nil {
			var e *Error
			errors.As(rerr, &e)
			v.Error = &OpError{Code: e.Code, Message: e.Message}
		} else {
			v.Runtime = RuntimeReady
		}
		return v
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

// DefaultAgentPage is how many agents ListAgents returns when the
// request names no limit.
const DefaultAgentPage = 100

// ListAgents returns a page of agents, oldest first: at most limit
// (1..store.MaxAgentPage; 0 is DefaultAgentPage), after the agent whose id
// is after ("" from the first). A page shorter than its limit is the last.
// An unknown after, or a limit out of range, is INVALID_REQUEST.
func (s *Service) ListAgents(ctx context.Context, after string, limit int) ([]Agent, error) {
	if limit == 0 {
		limit = DefaultAgentPage
	}
	if limit < 1 || limit > store.MaxAgentPage {
		return nil, errf(CodeInvalidRequest, fmt.Sprintf("limit must be 1..%d", store.MaxAgentPage))
	}
	var cur store.AgentCursor
	if after != "" {
		a, err := s.st.GetAgent(ctx, after)
		if errors.Is(err, store.ErrNotFound) {
			return nil, errf(CodeInvalidRequest, "after: no agent "+after)
		}
		if err != nil {
			return nil, storageErr("read the page's start", err)
		}
		cur = store.AgentCursor{CreatedAt: a.CreatedAt, ID: a.ID}
	}
	as, err := s.st.ListAgents(ctx, store.ListAgentsParams{After: cur, Limit: limit})
	if err != nil {
		return nil, storageErr("list agents", err)
	}
	out := make([]Agent, 0, len(as))
	for _, a := range as {
		out = append(out, s.agentView(ctx, a))
	}
	return out, nil
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
