package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/aos-run/aos/internal/wire"
)

// ListNotifications calls GET /notifications: newest first, only unread
// ones when unread is set, at most limit (the server's default when 0).
func (c *Client) ListNotifications(ctx context.Context, unread bool, limit int) ([]wire.Notification, error) {
	q := url.Values{}
	if unread {
		q.Set("unread", "true")
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var ns []wire.Notification
	_, err := c.call(ctx, http.MethodGet, "/notifications", q, nil, &ns, nil)
	return ns, err
}

// MarkNotificationsRead calls POST /notifications/read with ids, or with
// all when ids is empty.
func (c *Client) MarkNotificationsRead(ctx context.Context, ids []int64) (wire.MarkReadResult, error) {
	req := wire.MarkReadRequest{IDs: ids}
	if len(ids) == 0 {
		all := true
		req.All = &all
	}
	var res wire.MarkReadResult
	_, err := c.call(ctx, http.MethodPost, "/notifications/read", nil, req, &res, nil)
	return res, err
}
