package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/store"
)

const missionCols = `id, project_id, title, spec, status, root_run_id, spent_usd, result, created_at, updated_at, ended_at`

func scanMission(sc interface{ Scan(...any) error }) (store.Mission, error) {
	var m store.Mission
	var spec string
	var result sql.NullString
	err := sc.Scan(&m.ID, &m.ProjectID, &m.Title, &spec, &m.Status, &m.RootRunID, &m.SpentUSD, &result, &m.CreatedAt, &m.UpdatedAt, &m.EndedAt)
	m.Spec = []byte(spec)
	m.Result = rawJSON(result)
	return m, err
}

func (q *queries) InsertMission(ctx context.Context, m store.Mission) error {
	args := missionArgs(m)
	_, err := q.q.ExecContext(ctx, `INSERT INTO missions (`+missionCols+`) VALUES (`+placeholders(1, len(args))+`)`, args...)
	if err != nil {
		return fmt.Errorf("insert mission: %w", err)
	}
	return nil
}

// missionArgs are m's values in missionCols' order, as inserted.
func missionArgs(m store.Mission) []any {
	spec := string(m.Spec)
	if spec == "" {
		spec = "{}"
	}
	return []any{m.ID, m.ProjectID, m.Title, spec, m.Status, m.RootRunID, m.SpentUSD, nullJSON(m.Result), m.CreatedAt, m.UpdatedAt, m.EndedAt}
}

// placeholders is "$from,…,$(from+n-1)".
func placeholders(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "$%d", from+i)
	}
	return b.String()
}

// InsertMissionRun inserts a mission, its root run, its events in order
// and, when a is not nil, an audit record, atomically: on PostgreSQL in one
// statement (a writable CTE: one round trip, no BEGIN or COMMIT of its
// own), elsewhere in one transaction (on SQLite one fsync and one turn of
// the write lock for the whole creation).
func (db *DB) InsertMissionRun(ctx context.Context, m store.Mission, r store.Run, a *store.AuditRecord, es ...store.Event) error {
	if !db.D.WritableCTE || len(es) == 0 {
		return db.Tx(ctx, func(q store.Queries) error {
			if err := q.InsertMission(ctx, m); err != nil {
				return err
			}
			if err := q.InsertRun(ctx, r); err != nil {
				return err
			}
			for _, e := range es {
				if _, err := q.InsertEvent(ctx, e); err != nil {
					return err
				}
			}
			if a != nil {
				if _, err := q.InsertAudit(ctx, *a); err != nil {
					return err
				}
			}
			return nil
		})
	}
	ma, ra := missionArgs(m), runArgs(r)
	missionVals, runVals := placeholders(1, len(ma)), placeholders(len(ma)+1, len(ra))
	args := append(ma, ra...)
	values, args := eventValues(es, args)
	auditCTE := ""
	if a != nil {
		aa := auditArgs(*a)
		auditCTE = `,
a AS (INSERT INTO audit_log (` + auditInsertCols + `) VALUES (` + placeholders(len(args)+1, len(aa)) + `))`
		args = append(args, aa...)
	}
	_, err := db.Queries.(*queries).q.ExecContext(ctx, `WITH m AS (INSERT INTO missions (`+missionCols+`) VALUES (`+missionVals+`)),
r AS (INSERT INTO runs (`+runCols+`) VALUES (`+runVals+`))`+auditCTE+`
INSERT INTO events (`+eventInsertCols+`) VALUES `+values, args...)
	if err != nil {
		return fmt.Errorf("insert mission and run: %w", err)
	}
	return nil
}

func (q *queries) GetMission(ctx context.Context, id string) (store.Mission, error) {
	m, err := scanMission(q.q.QueryRowContext(ctx, `SELECT `+missionCols+` FROM missions WHERE id = $1`, id))
	if err != nil {
		return m, notFound(err, "get mission")
	}
	return m, nil
}

func (q *queries) ListMissions(ctx context.Context, p store.ListMissionsParams) ([]store.Mission, error) {
	var where []string
	var args []any
	if p.Status != "" {
		args = append(args, p.Status)
		where = append(where, fmt.Sprintf("status = $%d", len(args)))
	}
	if p.ProjectID != "" {
		args = append(args, p.ProjectID)
		where = append(where, fmt.Sprintf("project_id = $%d", len(args)))
	}
	query := `SELECT ` + missionCols + ` FROM missions`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	limit := p.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	args = append(args, limit)
	query += fmt.Sprintf(" ORDER BY created_at DESC, id LIMIT $%d", len(args))
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list missions: %w", err)
	}
	defer rows.Close()
	var out []store.Mission
	for rows.Next() {
		m, err := scanMission(rows)
		if err != nil {
			return nil, fmt.Errorf("list missions: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func (q *queries) UpdateMissionStatus(ctx context.Context, p store.UpdateMissionStatusParams) error {
	res, err := q.q.ExecContext(ctx, `UPDATE missions SET status = $2, result = COALESCE($3, result), ended_at = $4, updated_at = $5 WHERE id = $1`,
		p.ID, p.Status, nullJSON(p.Result), p.EndedAt, p.Now)
	if err != nil {
		return fmt.Errorf("update mission status: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("update mission status: %w", store.ErrNotFound)
	}
	return nil
}

func (q *queries) AddMissionSpend(ctx context.Context, missionID string, usd float64, now int64) error {
	_, err := q.q.ExecContext(ctx, `UPDATE missions SET spent_usd = spent_usd + $2, updated_at = $3 WHERE id = $1`, missionID, usd, now)
	if err != nil {
		return fmt.Errorf("add mission spend: %w", err)
	}
	return nil
}
