package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

const projectCols = `id, name, path, mode, origin, created_at, updated_at`

func (q *queries) InsertProject(ctx context.Context, p store.Project) error {
	res, err := q.q.ExecContext(ctx, `INSERT INTO projects (`+projectCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT DO NOTHING`,
		p.ID, p.Name, p.Path, p.Mode, p.Origin, p.CreatedAt, p.UpdatedAt)
	if err != nil {
		return fmt.Errorf("insert project: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("insert project %s: %w", p.ID, store.ErrConflict)
	}
	return nil
}

func scanProject(sc interface{ Scan(...any) error }) (store.Project, error) {
	var p store.Project
	err := sc.Scan(&p.ID, &p.Name, &p.Path, &p.Mode, &p.Origin, &p.CreatedAt, &p.UpdatedAt)
	return p, err
}

func (q *queries) GetProject(ctx context.Context, id string) (store.Project, error) {
	p, err := scanProject(q.q.QueryRowContext(ctx, `SELECT `+projectCols+` FROM projects WHERE id = $1`, id))
	if err != nil {
		return p, notFound(err, "get project")
	}
	return p, nil
}

func (q *queries) ListProjects(ctx context.Context) ([]store.Project, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+projectCols+` FROM projects ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	defer rows.Close()
	var out []store.Project
	for rows.Next() {
		p, err := scanProject(rows)
		if err != nil {
			return nil, fmt.Errorf("list projects: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func (q *queries) RenameProject(ctx context.Context, id, name string, now int64) error {
	res, err := q.q.ExecContext(ctx, `UPDATE projects SET name = $2, updated_at = $3 WHERE id = $1`, id, name, now)
	if err != nil {
		return fmt.Errorf("rename project: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("rename project %s: %w", id, store.ErrNotFound)
	}
	return nil
}

func (q *queries) DeleteProject(ctx context.Context, id string) error {
	res, err := q.q.ExecContext(ctx, `DELETE FROM projects WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("delete project: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("delete project %s: %w", id, store.ErrNotFound)
	}
	return nil
}

// notifFrom joins what a notification needs: its mission (for the title
// and to tell a root run from a child) and its read row.
func (q *queries) notifFrom() string {
	return ` FROM events e LEFT JOIN missions m ON m.id = e.mission_id LEFT JOIN notification_reads r ON r.event_id = e.` + q.d.EventPos + ` `
}

// notifWhere selects notification events: every wait.created and the
// run.completed of each mission's root run, once they have a position.
func (q *queries) notifWhere() string {
	return `e.kind IN ('wait.created', 'run.completed') AND (e.kind = 'wait.created' OR e.run_id = m.root_run_id) AND e.` + q.d.EventPos + ` IS NOT NULL`
}

// notifRead is true for a read notification: read one by one, or at or
// below the read-all marker.
func (q *queries) notifRead() string {
	return `(r.event_id IS NOT NULL OR e.` + q.d.EventPos + ` <= COALESCE((SELECT read_through FROM notification_marker WHERE id = 1), 0))`
}

func (q *queries) ListNotifications(ctx context.Context, p store.ListNotificationsParams) ([]store.Notification, error) {
	if err := q.sequence(ctx); err != nil {
		return nil, err
	}
	limit := p.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	where := q.notifWhere()
	if p.UnreadOnly {
		where += ` AND NOT ` + q.notifRead()
	}
	pos := `e.` + q.d.EventPos
	rows, err := q.q.QueryContext(ctx, `SELECT `+pos+`, e.mission_id, e.run_id, e.kind, e.payload, e.created_at, COALESCE(m.title, ''),
CASE WHEN `+q.notifRead()+` THEN 1 ELSE 0 END`+q.notifFrom()+`WHERE `+where+` ORDER BY `+pos+` DESC LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("list notifications: %w", err)
	}
	defer rows.Close()
	var out []store.Notification
	for rows.Next() {
		var n store.Notification
		var payload string
		var read int
		if err := rows.Scan(&n.ID, &n.MissionID, &n.RunID, &n.Kind, &payload, &n.CreatedAt, &n.MissionTitle, &read); err != nil {
			return nil, fmt.Errorf("list notifications: %w", err)
		}
		n.Payload, n.Read = []byte(payload), read == 1
		out = append(out, n)
	}
	return out, rows.Err()
}

func (q *queries) MarkNotificationsRead(ctx context.Context, ids []int64, now int64) (int, error) {
	if err := q.sequence(ctx); err != nil {
		return 0, err
	}
	marked := 0
	for _, id := range ids {
		res, err := q.q.ExecContext(ctx, `INSERT INTO notification_reads (event_id, read_at) SELECT e.`+q.d.EventPos+`, $2`+q.notifFrom()+
			`WHERE e.`+q.d.EventPos+` = $1 AND `+q.notifWhere()+` AND NOT `+q.notifRead()+` ON CONFLICT (event_id) DO NOTHING`, id, now)
		if err != nil {
			return marked, fmt.Errorf("mark notification %d read: %w", id, err)
		}
		n, _ := res.RowsAffected()
		marked += int(n)
	}
	return marked, nil
}

func (q *queries) MarkAllNotificationsRead(ctx context.Context, now int64) (int, error) {
	if err := q.sequence(ctx); err != nil {
		return 0, err
	}
	var through sql.NullInt64
	if err := q.q.QueryRowContext(ctx, `SELECT MAX(`+q.d.EventPos+`) FROM events`).Scan(&through); err != nil {
		return 0, fmt.Errorf("mark all notifications read: %w", err)
	}
	var n int
	err := q.q.QueryRowContext(ctx, `SELECT COUNT(*)`+q.notifFrom()+`WHERE `+q.notifWhere()+` AND NOT `+q.notifRead()+` AND e.`+q.d.EventPos+` <= $1`,
		through.Int64).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("mark all notifications read: count: %w", err)
	}
	_, err = q.q.ExecContext(ctx, `INSERT INTO notification_marker (id, read_through, updated_at) VALUES (1, $1, $2)
ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at,
  read_through = CASE WHEN excluded.read_through > notification_marker.read_through THEN excluded.read_through ELSE notification_marker.read_through END`,
		through.Int64, now)
	if err != nil {
		return 0, fmt.Errorf("mark all notifications read: %w", err)
	}
	return n, nil
}
