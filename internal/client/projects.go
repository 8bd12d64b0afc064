package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/aos-run/aos/internal/wire"
)

// ListProjects calls GET /projects.
func (c *Client) ListProjects(ctx context.Context) ([]wire.Project, error) {
	var ps []wire.Project
	_, err := c.call(ctx, http.MethodGet, "/projects", nil, nil, &ps, nil)
	return ps, err
}

// AddProject calls POST /projects.
func (c *Client) AddProject(ctx context.Context, req wire.CreateProjectRequest) (wire.Project, error) {
	var p wire.Project
	_, err := c.call(ctx, http.MethodPost, "/projects", nil, req, &p, nil)
	return p, err
}

// RenameProject calls PATCH /projects/{id}.
func (c *Client) RenameProject(ctx context.Context, id, name string) (wire.Project, error) {
	var p wire.Project
	_, err := c.call(ctx, http.MethodPatch, "/projects/"+url.PathEscape(id), nil, wire.UpdateProjectRequest{Name: name}, &p, nil)
	return p, err
}

// DeleteProject calls DELETE /projects/{id}: the project is unregistered;
// its directory stays on the server.
func (c *Client) DeleteProject(ctx context.Context, id string) error {
	_, err := c.call(ctx, http.MethodDelete, "/projects/"+url.PathEscape(id), nil, nil, nil, nil)
	return err
}
