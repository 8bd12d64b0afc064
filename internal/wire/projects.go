package wire

// Project is a project as presented: Path relative to the workspace root,
// Dir absolute.
type Project struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Path      string `json:"path"`
	Dir       string `json:"dir"`
	Mode      string `json:"mode" enum:"init,existing,clone"`
	Origin    string `json:"origin"`
	CreatedAt int64  `json:"createdAt"`
	UpdatedAt int64  `json:"updatedAt"`
}

// CreateProjectRequest is POST /projects' body. Path is relative to the
// workspace root (or absolute inside it).
type CreateProjectRequest struct {
	Name string `json:"name"`
	Path string `json:"path"`
	Mode string `json:"mode" enum:"init,existing,clone"`
	URL  string `json:"url,omitempty"`
}

// UpdateProjectRequest is PATCH /projects/{id}'s body.
type UpdateProjectRequest struct {
	Name string `json:"name"`
}
