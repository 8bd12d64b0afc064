package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

// Console reveals map seed 000's "Desktop reveal after preparation" onto
// aos: as soon as a preparation's creation yields an agent, the journal
// holds a pending reveal {operationId, machineId, agentId} (the seed's
// device_prepare_open), written in the same transaction as the creation
// receipt. The owner's signed-in console fetches the pending ones, shows
// each agent (a notice with a link to its page; it never creates, sends
// or approves anything) and only then acknowledges it (the seed's
// device_prepare_opened). The acknowledgement is persisted and kept: an
// acknowledged reveal is never delivered again, and a pending one is
// delivered again after any restart until it is acknowledged. A reveal is
// not a device operation or capability: the device channel's protocol is
// unchanged, and the routes are owner routes.

// MaxPendingReveals bounds one listing of pending reveals.
const MaxPendingReveals = 50

// Reveal is one console reveal of a prepared agent.
type Reveal struct {
	OperationID string `json:"operationId"`
	MachineID   string `json:"machineId"`
	AgentID     string `json:"agentId"`
	// AgentName and PackageID say what the console shows.
	AgentName string `json:"agentName"`
	PackageID string `json:"packageId"`
	CreatedAt int64  `json:"createdAt"`
	// OpenedAt is when the console acknowledged it; null while pending.
	OpenedAt *int64 `json:"openedAt"`
}

// RevealOpenedRequest is the console's acknowledgement of an operation's
// reveal (the seed's device_prepare_opened {operationId, agentId}; the
// operation id is in the path).
type RevealOpenedRequest struct {
	AgentID string `json:"agentId"`
}

// createAgent records an agent (its creation receipt) and its pending
// reveal in one transaction, so that no created agent lacks its reveal.
func (s *Service) createAgent(ctx context.Context, a store.AgentRecord) error {
	return s.st.Tx(ctx, func(q store.Queries) error {
		if err := q.InsertAgent(ctx, a); err != nil {
			return err
		}
		if err := q.InsertAgentReveal(ctx, store.AgentReveal{OperationID: a.OperationID, AgentID: a.ID, CreatedAt: a.CreatedAt}); err != nil {
			return fmt.Errorf("record the agent's reveal: %w", err)
		}
		return nil
	})
}

// PendingReveals returns the reveals the console has not acknowledged,
// oldest first, at most MaxPendingReveals.
func (s *Service) PendingReveals(ctx context.Context) ([]Reveal, error) {
	rs, err := s.st.ListPendingAgentReveals(ctx, MaxPendingReveals)
	if err != nil {
		return nil, storageErr("list pending reveals", err)
	}
	out := make([]Reveal, 0, len(rs))
	for _, r := range rs {
		out = append(out, s.revealView(r))
	}
	return out, nil
}

// RevealOpened records that the console showed operationID's agent. It is
// idempotent: a repeated acknowledgement keeps the first time. An
// operation without a reveal of agentID is OPERATION_NOT_FOUND.
func (s *Service) RevealOpened(ctx context.Context, operationID string, req RevealOpenedRequest) (Reveal, error) {
	r, err := s.st.AckAgentReveal(ctx, operationID, req.AgentID, s.now())
	if errors.Is(err, store.ErrNotFound) {
		return Reveal{}, &Error{Code: CodeOperationNotFound, Message: "operation " + operationID + " has no reveal of agent " + req.AgentID,
			Guidance: "acknowledge the operationId and agentId of a reveal the console received"}
	}
	if err != nil {
		return Reveal{}, storageErr("record the reveal's acknowledgement", err)
	}
	return s.revealView(r), nil
}

func (s *Service) revealView(r store.AgentReveal) Reveal {
	v := Reveal{OperationID: r.OperationID, MachineID: s.machineID, AgentID: r.AgentID, AgentName: r.AgentName, PackageID: r.PackageID, CreatedAt: r.CreatedAt}
	if v.AgentName == "" {
		v.AgentName = r.AgentID
	}
	if r.OpenedAt != 0 {
		at := r.OpenedAt
		v.OpenedAt = &at
	}
	return v
}
