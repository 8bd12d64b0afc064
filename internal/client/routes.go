package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/mission"
)

// Status calls GET /system/status; it also verifies the token.
func (c *Client) Status(ctx context.Context) (mission.Status, error) {
	var st mission.Status
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
func (c *Client) ListMissions(ctx context.Context, o ListMissionsOptions) ([]mission.Mission, error) {
	q := url.Values{}
	setIf(q, "status", o.Status)
	setIf(q, "projectId", o.ProjectID)
	if o.Limit > 0 {
		q.Set("limit", itoa(o.Limit))
	}
	var ms []mission.Mission
	_, err := c.call(ctx, http.MethodGet, "/missions", q, nil, &ms, nil)
	return ms, err
}

// CreateMission calls POST /missions.
func (c *Client) CreateMission(ctx context.Context, req mission.CreateRequest) (mission.Mission, error) {
	var m mission.Mission
	_, err := c.call(ctx, http.MethodPost, "/missions", nil, req, &m, nil)
	return m, err
}

// GetMission calls GET /missions/{id}.
func (c *Client) GetMission(ctx context.Context, id string) (mission.Mission, error) {
	var m mission.Mission
	_, err := c.call(ctx, http.MethodGet, "/missions/"+url.PathEscape(id), nil, nil, &m, nil)
	return m, err
}

// CancelMission calls POST /missions/{id}/cancel.
func (c *Client) CancelMission(ctx context.Context, id string) (mission.Mission, error) {
	var m mission.Mission
	_, err := c.call(ctx, http.MethodPost, "/missions/"+url.PathEscape(id)+"/cancel", nil, api.Empty{}, &m, nil)
	return m, err
}

// RetryMission calls POST /missions/{id}/retry: a new mission from an
// ended one's spec.
func (c *Client) RetryMission(ctx context.Context, id string) (mission.Mission, error) {
	var m mission.Mission
	_, err := c.call(ctx, http.MethodPost, "/missions/"+url.PathEscape(id)+"/retry", nil, api.Empty{}, &m, nil)
	return m, err
}

// ListRuns calls GET /missions/{id}/runs.
func (c *Client) ListRuns(ctx context.Context, missionID string) ([]mission.Run, error) {
	var rs []mission.Run
	_, err := c.call(ctx, http.MethodGet, "/missions/"+url.PathEscape(missionID)+"/runs", nil, nil, &rs, nil)
	return rs, err
}

// PostMessage calls POST /runs/{id}/message.
func (c *Client) PostMessage(ctx context.Context, runID, text string) (api.MessageResponse, error) {
	var r api.MessageResponse
	_, err := c.call(ctx, http.MethodPost, "/runs/"+url.PathEscape(runID)+"/message", nil, api.MessageRequest{Text: text}, &r, nil)
	return r, err
}

// ListWaitsOptions filter GET /waits.
type ListWaitsOptions struct {
	Status    string // pending, resolved, … ("" lists all)
	MissionID string
}

// ListWaits calls GET /waits.
func (c *Client) ListWaits(ctx context.Context, o ListWaitsOptions) ([]mission.Wait, error) {
	q := url.Values{}
	setIf(q, "status", o.Status)
	setIf(q, "missionId", o.MissionID)
	var ws []mission.Wait
	_, err := c.call(ctx, http.MethodGet, "/waits", q, nil, &ws, nil)
	return ws, err
}

// ResolveWait calls POST /waits/{id}/resolve.
func (c *Client) ResolveWait(ctx context.Context, id string, r mission.Resolution) (mission.Wait, error) {
	var w mission.Wait
	_, err := c.call(ctx, http.MethodPost, "/waits/"+url.PathEscape(id)+"/resolve", nil, r, &w, nil)
	return w, err
}

// ListRules calls GET /policy/rules (projectID "": every rule).
func (c *Client) ListRules(ctx context.Context, projectID string) ([]mission.Rule, error) {
	q := url.Values{}
	setIf(q, "projectId", projectID)
	var rs []mission.Rule
	_, err := c.call(ctx, http.MethodGet, "/policy/rules", q, nil, &rs, nil)
	return rs, err
}

// AddRule calls POST /policy/rules.
func (c *Client) AddRule(ctx context.Context, req mission.AddRuleRequest) (mission.Rule, error) {
	var r mission.Rule
	_, err := c.call(ctx, http.MethodPost, "/policy/rules", nil, req, &r, nil)
	return r, err
}

// DeleteRule calls DELETE /policy/rules/{id}.
func (c *Client) DeleteRule(ctx context.Context, id string) error {
	_, err := c.call(ctx, http.MethodDelete, "/policy/rules/"+url.PathEscape(id), nil, nil, nil, nil)
	return err
}

// Spend calls GET /spend.
func (c *Client) Spend(ctx context.Context) (mission.Spend, error) {
	var s mission.Spend
	_, err := c.call(ctx, http.MethodGet, "/spend", nil, nil, &s, nil)
	return s, err
}

// Models calls GET /models.
func (c *Client) Models(ctx context.Context) ([]mission.Model, error) {
	var ms []mission.Model
	_, err := c.call(ctx, http.MethodGet, "/models", nil, nil, &ms, nil)
	return ms, err
}

func setIf(q url.Values, k, v string) {
	if v != "" {
		q.Set(k, v)
	}
}
