package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/aos-run/aos/internal/wire"
)

// Status calls GET /system/status; it also verifies the token.
func (c *Client) Status(ctx context.Context) (wire.Status, error) {
	var st wire.Status
	_, err := c.call(ctx, http.MethodGet, "/system/status", nil, nil, &st, nil)
	return st, err
}

// ListMissionsOptions filter GET /missions.
type ListMissionsOptions struct {
	Status    string
	ProjectID string
	Limit     int
}

// ListMissions calls GET /missions.
func (c *Client) ListMissions(ctx context.Context, o ListMissionsOptions) ([]wire.Mission, error) {
	q := url.Values{}
	setIf(q, "status", o.Status)
	setIf(q, "projectId", o.ProjectID)
	if o.Limit > 0 {
		q.Set("limit", itoa(o.Limit))
	}
	var ms []wire.Mission
	_, err := c.call(ctx, http.MethodGet, "/missions", q, nil, &ms, nil)
	return ms, err
}

// CreateMission calls POST /missions.
func (c *Client) CreateMission(ctx context.Context, req wire.CreateRequest) (wire.Mission, error) {
	var m wire.Mission
	_, err := c.call(ctx, http.MethodPost, "/missions", nil, req, &m, nil)
	return m, err
}

// GetMission calls GET /missions/{id}.
func (c *Client) GetMission(ctx context.Context, id string) (wire.Mission, error) {
	var m wire.Mission
	_, err := c.call(ctx, http.MethodGet, "/missions/"+url.PathEscape(id), nil, nil, &m, nil)
	return m, err
}

// CancelMission calls POST /missions/{id}/cancel.
func (c *Client) CancelMission(ctx context.Context, id string) (wire.Mission, error) {
	var m wire.Mission
	_, err := c.call(ctx, http.MethodPost, "/missions/"+url.PathEscape(id)+"/cancel", nil, wire.Empty{}, &m, nil)
	return m, err
}

// RetryMission calls POST /missions/{id}/retry: a new mission from an
// ended one's spec.
func (c *Client) RetryMission(ctx context.Context, id string) (wire.Mission, error) {
	var m wire.Mission
	_, err := c.call(ctx, http.MethodPost, "/missions/"+url.PathEscape(id)+"/retry", nil, wire.Empty{}, &m, nil)
	return m, err
}

// ListRuns calls GET /missions/{id}/runs.
func (c *Client) ListRuns(ctx context.Context, missionID string) ([]wire.Run, error) {
	var rs []wire.Run
	_, err := c.call(ctx, http.MethodGet, "/missions/"+url.PathEscape(missionID)+"/runs", nil, nil, &rs, nil)
	return rs, err
}

// PostMessage calls POST /runs/{id}/message.
func (c *Client) PostMessage(ctx context.Context, runID, text string) (wire.MessageResponse, error) {
	var r wire.MessageResponse
	_, err := c.call(ctx, http.MethodPost, "/runs/"+url.PathEscape(runID)+"/message", nil, wire.MessageRequest{Text: text}, &r, nil)
	return r, err
}

// ListWaitsOptions filter GET /waits.
type ListWaitsOptions struct {
	Status    string // pending, resolved, … ("" lists all)
	MissionID string
}

// ListWaits calls GET /waits.
func (c *Client) ListWaits(ctx context.Context, o ListWaitsOptions) ([]wire.Wait, error) {
	q := url.Values{}
	setIf(q, "status", o.Status)
	setIf(q, "missionId", o.MissionID)
	var ws []wire.Wait
	_, err := c.call(ctx, http.MethodGet, "/waits", q, nil, &ws, nil)
	return ws, err
}

// ResolveWait calls POST /waits/{id}/resolve.
func (c *Client) ResolveWait(ctx context.Context, id string, r wire.Resolution) (wire.Wait, error) {
	var w wire.Wait
	_, err := c.call(ctx, http.MethodPost, "/waits/"+url.PathEscape(id)+"/resolve", nil, r, &w, nil)
	return w, err
}

// ListRules calls GET /policy/rules (projectID "": every rule).
func (c *Client) ListRules(ctx context.Context, projectID string) ([]wire.Rule, error) {
	q := url.Values{}
	setIf(q, "projectId", projectID)
	var rs []wire.Rule
	_, err := c.call(ctx, http.MethodGet, "/policy/rules", q, nil, &rs, nil)
	return rs, err
}

// AddRule calls POST /policy/rules.
func (c *Client) AddRule(ctx context.Context, req wire.AddRuleRequest) (wire.Rule, error) {
	var r wire.Rule
	_, err := c.call(ctx, http.MethodPost, "/policy/rules", nil, req, &r, nil)
	return r, err
}

// DeleteRule calls DELETE /policy/rules/{id}.
func (c *Client) DeleteRule(ctx context.Context, id string) error {
	_, err := c.call(ctx, http.MethodDelete, "/policy/rules/"+url.PathEscape(id), nil, nil, nil, nil)
	return err
}

// Spend calls GET /spend.
func (c *Client) Spend(ctx context.Context) (wire.Spend, error) {
	var s wire.Spend
	_, err := c.call(ctx, http.MethodGet, "/spend", nil, nil, &s, nil)
	return s, err
}

// Models calls GET /models.
func (c *Client) Models(ctx context.Context) ([]wire.Model, error) {
	var ms []wire.Model
	_, err := c.call(ctx, http.MethodGet, "/models", nil, nil, &ms, nil)
	return ms, err
}

func setIf(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}
