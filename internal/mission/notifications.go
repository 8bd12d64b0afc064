package mission

import (
	"context"
	"encoding/json"
	"github.com/aos-run/aos/internal/wire"
	"strings"

	"github.com/aos-run/aos/internal/store"
)

// Notification kinds.
const (
	NotifyApproval = "approval"         // a tool call waits for the owner's approval
	NotifyQuestion = "question"         // the agent asks the owner
	NotifyFinished = "mission_finished" // a mission's root run ended
)

// Notification is wire.Notification, its JSON form on the API.
type Notification = wire.Notification

// ListNotificationsRequest filters ListNotifications.
type ListNotificationsRequest struct {
	UnreadOnly bool
	Limit      int // 1..200, default 50
}

// MarkReadRequest is wire.MarkReadRequest, its JSON form on the API.
type MarkReadRequest = wire.MarkReadRequest

// MarkReadResult is wire.MarkReadResult, its JSON form on the API.
type MarkReadResult = wire.MarkReadResult

// Bounds of a notification's texts, in characters.
const (
	notifyTitleMax = 200
	notifyBodyMax  = 500
)

// ListNotifications returns the owner's notifications, newest first.
func (s *Service) ListNotifications(ctx context.Context, r ListNotificationsRequest) ([]Notification, error) {
	if r.Limit == 0 {
		r.Limit = 50
	}
	if r.Limit < 1 || r.Limit > 200 {
		return nil, invalid("limit must be 1..200")
	}
	ns, err := s.st.ListNotifications(ctx, store.ListNotificationsParams{UnreadOnly: r.UnreadOnly, Limit: r.Limit})
	if err != nil {
		return nil, translate("list notifications", err)
	}
	out := make([]Notification, 0, len(ns))
	for _, n := range ns {
		out = append(out, notificationView(n))
	}
	return out, nil
}

// MarkNotificationsRead marks the notifications r names, or all of them,
// read. Ids that name no notification are ignored.
func (s *Service) MarkNotificationsRead(ctx context.Context, actor Actor, r MarkReadRequest) (MarkReadResult, error) {
	all := r.All != nil && *r.All
	if (r.IDs != nil) == (r.All != nil) || (r.IDs != nil && len(r.IDs) == 0) || (r.All != nil && !all) {
		return MarkReadResult{}, invalid("give exactly one of ids (a non-empty list) and all (true)")
	}
	if len(r.IDs) > 1000 {
		return MarkReadResult{}, invalid("at most 1000 ids at once")
	}
	for _, id := range r.IDs {
		if id <= 0 {
			return MarkReadResult{}, invalid("ids must be positive")
		}
	}
	now := s.now().UnixMilli()
	var n int
	err := s.st.Tx(ctx, func(q store.Queries) error {
		var err error
		if all {
			n, err = q.MarkAllNotificationsRead(ctx, now)
		} else {
			n, err = q.MarkNotificationsRead(ctx, r.IDs, now)
		}
		return err
	})
	if err != nil {
		return MarkReadResult{}, translate("mark notifications read", err)
	}
	s.audit(ctx, actor, "notifications.read", "", map[string]any{"all": all, "ids": len(r.IDs), "marked": n})
	return MarkReadResult{Marked: n}, nil
}

// notificationView turns an event into its notification. Titles and bodies
// come from payloads the kernel wrote (and that were bounded and sanitised
// there) and are cut short here again.
func notificationView(n store.Notification) Notification {
	out := Notification{ID: n.ID, At: n.CreatedAt, MissionID: n.MissionID, RunID: n.RunID, Read: n.Read}
	switch n.Kind {
	case "wait.created":
		var p struct {
			Kind    string `json:"kind"`
			Payload struct {
				Title  string `json:"title"`
				Detail string `json:"detail"`
				Reason string `json:"reason"`
				Tool   string `json:"tool"`
				Text   string `json:"text"`
			} `json:"payload"`
		}
		_ = json.Unmarshal(n.Payload, &p)
		switch p.Kind {
		case "approval":
			out.Kind = NotifyApproval
			subject := p.Payload.Title
			if subject == "" {
				subject = p.Payload.Tool
			}
			out.Title = "Approval needed: " + subject
			out.Body = p.Payload.Detail
			if out.Body == "" {
				out.Body = p.Payload.Reason
			}
		default:
			out.Kind = NotifyQuestion
			out.Title = "Question: " + firstLine(p.Payload.Text, 120)
			out.Body = p.Payload.Text
		}
	default: // run.completed of a root run
		var p struct {
			Status  string `json:"status"`
			Summary string `json:"summary"`
		}
		_ = json.Unmarshal(n.Payload, &p)
		out.Kind = NotifyFinished
		title := n.MissionTitle
		if title == "" {
			title = n.MissionID
		}
		out.Title = "Mission " + strings.ReplaceAll(p.Status, "_", " ") + ": " + title
		out.Body = p.Summary
	}
	out.Title = bounded(out.Title, notifyTitleMax)
	out.Body = bounded(out.Body, notifyBodyMax)
	return out
}

// bounded cuts s to at most n characters, ending with "…" when cut, and
// drops control characters but newlines.
func bounded(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r != '\n' && (r < 0x20 || r == 0x7f) {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
