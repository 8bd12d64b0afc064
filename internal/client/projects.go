package client

import (
	"context"
	"net/http"
)

// Project is a project as GET /projects presents it. It is defined here
// because the server's type (mission.Project) is being added in parallel;
// the JSON shape is the agreed contract.
type Project struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	Dir       string `json:"dir"`
	Mode      string `json:"mode"`
	Origin    string `json:"origin,omitempty"`
	CreatedAt int64  `json:"createdAt"`
	UpdatedAt int64  `json:"updatedAt"`
}

// AddProjectRequest is POST /projects's body. Mode is "existing", "init"
// or "clone" (URL is required for clone).
type AddProjectRequest struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Mode string `json:"mode"`
	URL  string `json:"url,omitempty"`
}

// ListProjects calls GET /projects.
func (c *Client) ListProjects(ctx context.Context) ([]Project, error) {
	var ps []Project
	_, err := c.call(ctx, http.MethodGet, "/projects", nil, nil, &ps, nil)
	return ps, err
}

// AddProject calls POST /projects.
func (c *Client) AddProject(ctx context.Context, req AddProjectRequest) (Project, error) {
	var p Project
	_, err := c.call(ctx, http.MethodPost, "/projects", nil, req, &p, nil)
	return p, err
}
