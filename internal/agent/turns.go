package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
)

// MaxTurnText bounds a turn's text, in bytes.
const MaxTurnText = 32 << 10

// ReceiptPending is a receipt whose mission is not confirmed yet: a send
// interrupted there is reconciled by looking the mission up, never resent
// blindly.
const ReceiptPending = "pending"

// missionTitle names the receipt in the mission's title (for people; a
// pending receipt finds its mission by its key, turnMissionKey).
func missionTitle(receiptID, text string) string {
	t := "[" + receiptID + "] " + gitx.FirstLine(text)
	for len(t) > 200 {
		_, n := utf8.DecodeLastRuneInString(t)
		t = t[:len(t)-n]
	}
	return t
}

// SendTurn sends a task to an agent once per (identity, key): it creates a
// mission in the agent's workspace with the package's instructions, policy
// and done criteria, and returns its durable receipt. The same key and
// text answer the same receipt (Duplicate); other parameters are
// IDEMPOTENCY_CONFLICT.
func (s *Service) SendTurn(ctx context.Context, identity string, r TurnSendRequest) (Receipt, error) {
	if err := s.checkRevoked(ctx, identity, "this identity's authorization has ended"); err != nil {
		return Receipt{}, err
	}
	switch {
	case r.MachineID != s.machineID:
		return Receipt{}, &Error{Code: CodeMachineMismatch, Message: "machineId does not name this machine (" + s.machineID + ")"}
	case !keyRe().MatchString(r.IdempotencyKey):
		return Receipt{}, errf(CodeInvalidRequest, "idempotencyKey must be 1-64 ASCII letters, digits, _ or -")
	case r.AgentID == "" || len(r.AgentID) > 100 || hasControl(r.AgentID):
		return Receipt{}, errf(CodeInvalidRequest, "agentId is required")
	case strings.TrimSpace(r.Text) == "" || len(r.Text) > MaxTurnText || !utf8.ValidString(r.Text) || strings.ContainsRune(r.Text, 0):
		return Receipt{}, errf(CodeInvalidRequest, "text must be 1..32768 bytes of UTF-8 text")
	}
	h := sha256.Sum256([]byte(r.AgentID + "\x00" + r.Text))
	fp := hex.EncodeToString(h[:])
	// No lock: the store's unique (identity, key) admits one receipt, and
	// the receipt's keyed mission creation one mission, across processes.
	for attempt := 0; ; attempt++ {
		t, err := s.st.GetAgentTurnByKey(ctx, identity, r.IdempotencyKey)
		switch {
		case err == nil:
			if t.Fingerprint != fp {
				return Receipt{}, &Error{Code: CodeIdempotencyConflict, Message: "idempotencyKey " + r.IdempotencyKey + " was used for another turn",
					Guidance: "follow receipt " + t.ID + ", or use a new key for a deliberately new task"}
			}
			if t.State == ReceiptPending {
				return s.deliver(ctx, t, r.Text, true)
			}
			rc := s.receiptView(ctx, t)
			rc.Duplicate = true
			return rc, nil
		case !errors.Is(err, store.ErrNotFound):
			return Receipt{}, storageErr("read the receipt", err)
		}
		if _, err := s.st.GetAgent(ctx, r.AgentID); errors.Is(err, store.ErrNotFound) {
			return Receipt{}, &Error{Code: CodeAgentUnavailable, Message: "no agent " + r.AgentID + " on this machine", Guidance: "check the agent id (agents.list)"}
		} else if err != nil {
			return Receipt{}, storageErr("read the agent", err)
		}
		now := s.now()
		t = store.AgentTurn{ID: "rc_" + randHex(8), Identity: identity, IdemKey: r.IdempotencyKey, Fingerprint: fp, AgentID: r.AgentID,
			State: ReceiptPending, CreatedAt: now, UpdatedAt: now}
		err = s.st.InsertAgentTurn(ctx, t)
		if errors.Is(err, store.ErrConflict) && attempt == 0 {
			continue // a concurrent send of the same key recorded it first: answer as its repeat
		}
		if err != nil {
			return Receipt{}, storageErr("record the receipt", err)
		}
		return s.deliver(ctx, t, r.Text, false)
	}
}

// turnMissionKey is the mission service's idempotency key of a receipt's
// mission: a repeat of the delivery (a retry, a restart, another server)
// finds the mission the first one made instead of creating a second.
func turnMissionKey(receiptID string) string { return "turn:" + receiptID }

// deliver creates the turn's mission, after looking for one a previous
// attempt under the same receipt created (reconcile), and records it.
func (s *Service) deliver(ctx context.Context, t store.AgentTurn, text string, reconcile bool) (Receipt, error) {
	a, err := s.st.GetAgent(ctx, t.AgentID)
	if err != nil {
		return Receipt{}, storageErr("read the agent", err)
	}
	title := missionTitle(t.ID, text)
	if reconcile {
		m, err := s.ms.GetMission(ctx, mission.KeyedMissionID(turnMissionKey(t.ID)))
		if err == nil {
			return s.recordTurn(ctx, t, &m, nil, true)
		}
		if !errors.Is(err, mission.ErrNotFound) {
			return Receipt{}, &Error{Code: CodeInternal, Message: "cannot reconcile the pending turn", Guidance: "retry the same key", Err: err}
		}
		// A receipt left pending by a version before keyed creation names
		// its mission only in the title: look among the project's latest.
		ms, err := s.ms.ListMissions(ctx, mission.ListMissionsRequest{ProjectID: a.ProjectID, Limit: 1000})
		if err != nil {
			return Receipt{}, &Error{Code: CodeInternal, Message: "cannot reconcile the pending turn", Guidance: "retry the same key", Err: err}
		}
		for _, m := range ms {
			if strings.HasPrefix(m.Title, "["+t.ID+"]") {
				return s.recordTurn(ctx, t, &m, nil, true)
			}
		}
	}
	if err := s.recheckRecord(ctx, a); err != nil {
		return s.recordTurn(ctx, t, nil, err, reconcile)
	}
	req := mission.CreateRequest{Title: title, Objective: text, ProjectID: a.ProjectID, Engine: a.Engine}
	if p, ok, err := s.lookup(ctx, a.PackageID); err == nil && ok {
		m := p.src.m
		req.Criteria = m.Criteria
		var bounds []string
		if m.Policy != nil {
			req.Network = m.Policy.Network
			if m.Policy.Boundaries != "" {
				bounds = append(bounds, m.Policy.Boundaries)
			}
		}
		// A new workspace has the instructions committed as AGENTS.md;
		// an existing one the owner chose is not modified, so they go to
		// the mission instead.
		if m.Instructions != "" && p.row.Dir != "" {
			if pr, err := s.ms.GetProject(ctx, a.ProjectID); err == nil && pr.Mode != mission.ProjectInit {
				if b, err := fs.ReadFile(os.DirFS(p.row.Dir), m.Instructions); err == nil {
					bounds = append(bounds, "Package instructions:\n"+string(b))
				}
			}
		}
		req.Boundaries = strings.Join(bounds, "\n\n")
	}
	mm, _, err := s.ms.CreateMissionOnce(ctx, actor(t.Identity), turnMissionKey(t.ID), req)
	if err != nil {
		code := CodeInvalidRequest
		var me *mission.Error
		if errors.As(err, &me) && me.Code == mission.CodeModelUnavailable {
			code = CodeEngineActionRequired
		}
		return s.recordTurn(ctx, t, nil, &Error{Code: code, Message: strings.TrimPrefix(err.Error(), "mission: "), Err: err}, reconcile)
	}
	return s.recordTurn(ctx, t, &mm, nil, reconcile)
}

// recordTurn records the turn's outcome: its mission m (just made or
// found, so its status is fresh), or the cause it failed with.
func (s *Service) recordTurn(ctx context.Context, t store.AgentTurn, m *mission.Mission, cause error, dup bool) (Receipt, error) {
	t.MissionID, t.State, t.UpdatedAt = "", ReceiptAccepted, s.now()
	if m != nil {
		t.MissionID = m.ID
	}
	if cause != nil {
		var e *Error
		if !errors.As(cause, &e) {
			e = &Error{Code: CodeInternal, Message: "the turn was not delivered"}
		}
		t.State, t.ErrorCode, t.ErrorMessage = ReceiptFailed, e.Code, e.Message
	}
	if err := s.st.UpdateAgentTurn(context.WithoutCancel(ctx), t); err != nil {
		return Receipt{}, storageErr("record the receipt", err)
	}
	rc := receiptOf(t)
	if m != nil {
		rc.MissionStatus = m.Status
	}
	rc.Duplicate = dup
	return rc, nil
}

// receiptOf is the receipt t, without its mission's status.
func receiptOf(t store.AgentTurn) Receipt {
	rc := Receipt{ReceiptID: t.ID, AgentID: t.AgentID, MissionID: t.MissionID, State: t.State, CreatedAt: t.CreatedAt}
	if t.ErrorCode != "" {
		rc.Error = &OpError{Code: t.ErrorCode, Message: t.ErrorMessage}
	}
	return rc
}

// receiptView is a receipt with its mission's current status.
func (s *Service) receiptView(ctx context.Context, t store.AgentTurn) Receipt {
	rc := receiptOf(t)
	if t.MissionID != "" {
		if m, err := s.ms.GetMission(ctx, t.MissionID); err == nil {
			rc.MissionStatus = m.Status
		} else {
			s.opts.Logger.Warn("agent: read a receipt's mission", "receipt", t.ID, "err", err.Error())
		}
	}
	return rc
}

// Receipt returns identity's turn receipt; another identity's or an
// unknown id is RECEIPT_NOT_FOUND.
func (s *Service) Receipt(ctx context.Context, identity, receiptID string) (Receipt, error) {
	t, err := s.st.GetAgentTurn(ctx, receiptID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.Identity != identity) {
		return Receipt{}, errf(CodeReceiptNotFound, "no receipt "+receiptID+" for this identity")
	}
	if err != nil {
		return Receipt{}, storageErr("read the receipt", err)
	}
	return s.receiptView(ctx, t), nil
}
