package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/store"
)

const waitCols = `id, run_id, mission_id, step_seq, kind, payload, status, resolution, actor, resolve_by, created_at, resolved_at, attempt`

func scanWait(sc interface{ Scan(...any) error }) (store.Wait, error) {
	var w store.Wait
	var payload string
	var res sql.NullString
	err := sc.Scan(&w.ID, &w.RunID, &w.MissionID, &w.StepSeq, &w.Kind, &payload, &w.Status, &res, &w.Actor, &w.ResolveBy, &w.CreatedAt, &w.ResolvedAt, &w.Attempt)
	w.Payload, w.Resolution = []byte(payload), rawJSON(res)
	return w, err
}

func (q *queries) InsertWait(ctx context.Context, w store.Wait) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO waits (`+waitCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)`,
		w.ID, w.RunID, w.MissionID, w.StepSeq, w.Kind, string(w.Payload), w.Status, nullJSON(w.Resolution), w.Actor, w.ResolveBy, w.CreatedAt, w.ResolvedAt, w.Attempt)
	if err != nil {
		return fmt.Errorf("insert wait: %w", err)
	}
	return nil
}

func (q *queries) GetWait(ctx context.Context, id string) (store.Wait, error) {
	w, err := scanWait(q.q.QueryRowContext(ctx, `SELECT `+waitCols+` FROM waits WHERE id = $1`, id))
	if err != nil {
		return w, notFound(err, "get wait")
	}
	return w, nil
}

func (q *queries) GetWaitByStep(ctx context.Context, runID string, seq int) (store.Wait, error) {
	w, err := scanWait(q.q.QueryRowContext(ctx, `SELECT `+waitCols+` FROM waits WHERE run_id = $1 AND step_seq = $2 ORDER BY attempt DESC LIMIT 1`, runID, seq))
	if err != nil {
		return w, notFound(err, "get wait by step")
	}
	return w, nil
}

func (q *queries) ListWaits(ctx context.Context, p store.ListWaitsParams) ([]store.Wait, error) {
	var where []string
	var args []any
	for _, f := range []struct{ col, v string }{{"status", p.Status}, {"mission_id", p.MissionID}, {"run_id", p.RunID}} {
		if f.v != "" {
			args = append(args, f.v)
			where = append(where, fmt.Sprintf("%s = $%d", f.col, len(args)))
		}
	}
	query := `SELECT ` + waitCols + ` FROM waits`
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	limit := p.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	args = append(args, limit)
	query += fmt.Sprintf(" ORDER BY created_at, id LIMIT $%d", len(args))
	return q.listWaits(ctx, query, args...)
}

func (q *queries) listWaits(ctx context.Context, query string, args ...any) ([]store.Wait, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list waits: %w", err)
	}
	defer rows.Close()
	var out []store.Wait
	for rows.Next() {
		w, err := scanWait(rows)
		if err != nil {
			return nil, fmt.Errorf("list waits: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

func (q *queries) ResolveWait(ctx context.Context, p store.ResolveWaitParams) error {
	res, err := q.q.ExecContext(ctx, `UPDATE waits SET status = $2, resolution = $3, actor = $4, resolved_at = $5 WHERE id = $1 AND status = 'pending'`,
		p.ID, p.Status, nullJSON(p.Resolution), p.Actor, p.Now)
	if err != nil {
		return fmt.Errorf("resolve wait: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("resolve wait %s: %w", p.ID, store.ErrConflict)
	}
	return nil
}

func (q *queries) DueWaits(ctx context.Context, now int64, limit int) ([]store.Wait, error) {
	return q.listWaits(ctx, `SELECT `+waitCols+` FROM waits WHERE status = 'pending' AND resolve_by > 0 AND resolve_by <= $1 ORDER BY resolve_by LIMIT $2`, now, limit)
}
