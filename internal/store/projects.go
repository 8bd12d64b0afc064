package store

import (
	"context"
	"encoding/json"
)

// ProjectQueries are the queries of projects (registered repositories under
// the workspace root) and of the owner's notification inbox, which is
// derived from persisted events plus a read state.
type ProjectQueries interface {
	// InsertProject registers a project; ErrConflict if its id or its
	// path is registered already.
	InsertProject(ctx context.Context, p Project) error
	// GetProject returns one project; ErrNotFound if there is none.
	GetProject(ctx context.Context, id string) (Project, error)
	// ListProjects returns every project, oldest first.
	ListProjects(ctx context.Context) ([]Project, error)
	// RenameProject sets a project's name; ErrNotFound if there is none.
	RenameProject(ctx context.Context, id, name string, now int64) error
	// DeleteProject unregisters a project; ErrNotFound if there is none.
	DeleteProject(ctx context.Context, id string) error

	// ListNotifications returns the notification events (every
	// wait.created, and each run.completed of a mission's root run),
	// newest first, with their read state.
	ListNotifications(ctx context.Context, p ListNotificationsParams) ([]Notification, error)
	// MarkNotificationsRead marks the notification events with these ids
	// read and returns how many were unread before. Ids of other events
	// are ignored.
	MarkNotificationsRead(ctx context.Context, ids []int64, now int64) (int, error)
	// MarkAllNotificationsRead marks every notification event that exists
	// now read and returns how many were unread before.
	MarkAllNotificationsRead(ctx context.Context, now int64) (int, error)
}

// Project is a registered repository. Path is relative to the workspace
// root and unique.
type Project struct {
	ID        string
	Name      string
	Path      string
	Mode      string // init, existing, clone
	Origin    string // the clone URL, or ""
	CreatedAt int64
	UpdatedAt int64
}

// Notification is a notification event with its read state. ID is the
// event's cursor position, as ListEvents reports it.
type Notification struct {
	ID           int64
	MissionID    string
	RunID        string
	Kind         string // wait.created or run.completed
	Payload      json.RawMessage
	CreatedAt    int64
	MissionTitle string
	Read         bool
}

// ListNotificationsParams filters ListNotifications.
type ListNotificationsParams struct {
	UnreadOnly bool
	Limit      int
}
