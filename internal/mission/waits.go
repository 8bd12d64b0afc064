package mission

import (
	"context"
	"github.com/aos-run/aos/internal/wire"
	"strings"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
)

// Wait is wire.Wait, its JSON form on the API.
type Wait = wire.Wait

func waitView(w store.Wait) Wait {
	return Wait{ID: w.ID, RunID: w.RunID, MissionID: w.MissionID, StepSeq: w.StepSeq, Kind: w.Kind, Payload: w.Payload, Status: w.Status,
		Resolution: w.Resolution, Actor: w.Actor, ResolveBy: w.ResolveBy, CreatedAt: w.CreatedAt, ResolvedAt: w.ResolvedAt}
}

var waitStatuses = map[string]bool{"pending": true, "resolved": true, "expired": true, "cancelled": true}

// ListWaitsRequest filters ListWaits.
type ListWaitsRequest struct {
	Status    string
	MissionID string
	Limit     int // 1..1000, default 100
}

// ListWaits returns waits, oldest first.
func (s *Service) ListWaits(ctx context.Context, r ListWaitsRequest) ([]Wait, error) {
	if r.Status != "" && !waitStatuses[r.Status] {
		return nil, invalid("status must be pending, resolved, expired or cancelled")
	}
	if r.Limit == 0 {
		r.Limit = 100
	}
	if r.Limit < 1 || r.Limit > 1000 {
		return nil, invalid("limit must be 1..1000")
	}
	ws, err := s.st.ListWaits(ctx, store.ListWaitsParams{Status: r.Status, MissionID: r.MissionID, Limit: r.Limit})
	if err != nil {
		return nil, translate("list waits", err)
	}
	out := make([]Wait, 0, len(ws))
	for _, w := range ws {
		out = append(out, waitView(w))
	}
	return out, nil
}

// Resolution is wire.Resolution, its JSON form on the API.
type Resolution = wire.Resolution

// maxAnswer bounds an answer or a reason, in bytes.
const maxAnswer = 8 << 10

// ResolveWait resolves a pending wait and re-queues its run.
func (s *Service) ResolveWait(ctx context.Context, actor Actor, waitID string, r Resolution) (Wait, error) {
	if len(r.Answer) > maxAnswer || len(r.Reason) > maxAnswer || !utf8.ValidString(r.Answer) || !utf8.ValidString(r.Reason) {
		return Wait{}, invalid("answer and reason must be UTF-8 of at most 8 KiB")
	}
	w, err := s.st.GetWait(ctx, waitID)
	if err != nil {
		return Wait{}, translate("resolve wait", err)
	}
	var res any
	switch kernel.WaitKind(w.Kind) {
	case kernel.WaitApproval:
		if r.Approved == nil || r.Answer != "" {
			return Wait{}, invalid("an approval takes approved (and optionally remember, reason), not answer")
		}
		if r.Remember && !*r.Approved {
			return Wait{}, invalid("remember applies only to an approval")
		}
		res = map[string]any{"approved": *r.Approved, "remember": r.Remember, "reason": r.Reason}
	case kernel.WaitQuestion:
		if r.Approved != nil || r.Remember || r.Reason != "" || strings.TrimSpace(r.Answer) == "" {
			return Wait{}, invalid("a question takes a non-empty answer only")
		}
		res = map[string]string{"answer": r.Answer}
	default:
		return Wait{}, invalid("wait kind %q cannot be resolved by the owner", w.Kind)
	}
	if _, err := s.k.ResolveWait(ctx, waitID, res, string(actor)); err != nil {
		return Wait{}, translate("resolve wait", err)
	}
	s.audit(ctx, actor, "wait.resolve", waitID, map[string]any{"kind": w.Kind, "approved": r.Approved, "remember": r.Remember})
	w, err = s.st.GetWait(ctx, waitID)
	if err != nil {
		return Wait{}, translate("resolve wait", err)
	}
	return waitView(w), nil
}

// PostMessage queues a steering message for a run and returns its id.
func (s *Service) PostMessage(ctx context.Context, actor Actor, runID, text string) (int64, error) {
	id, err := s.k.PostOwnerMessage(ctx, runID, text)
	if err != nil {
		return 0, translate("post message", err)
	}
	s.audit(ctx, actor, "run.message", runID, map[string]any{"messageId": id})
	return id, nil
}
