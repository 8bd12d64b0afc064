package sqlstore

import (
	"context"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

const tokenCols = `id, name, hash, scopes, created_at, revoked_at`

func (q *queries) InsertAPIToken(ctx context.Context, t store.APIToken) error {
	res, err := q.q.ExecContext(ctx, `INSERT INTO api_tokens (`+tokenCols+`) VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT DO NOTHING`,
		t.ID, t.Name, t.Hash, t.Scopes, t.CreatedAt, t.RevokedAt)
	if err != nil {
		return fmt.Errorf("insert api token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("insert api token %s: %w", t.ID, store.ErrConflict)
	}
	return nil
}

func scanToken(sc interface{ Scan(...any) error }) (store.APIToken, error) {
	var t store.APIToken
	err := sc.Scan(&t.ID, &t.Name, &t.Hash, &t.Scopes, &t.CreatedAt, &t.RevokedAt)
	return t, err
}

func (q *queries) GetAPITokenByHash(ctx context.Context, hash string) (store.APIToken, error) {
	t, err := scanToken(q.q.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM api_tokens WHERE hash = $1`, hash))
	if err != nil {
		return t, notFound(err, "get api token")
	}
	return t, nil
}

func (q *queries) ListAPITokens(ctx context.Context) ([]store.APIToken, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+tokenCols+` FROM api_tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list api tokens: %w", err)
	}
	defer rows.Close()
	var out []store.APIToken
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list api tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (q *queries) RevokeAPIToken(ctx context.Context, id string, now int64) error {
	res, err := q.q.ExecContext(ctx, `UPDATE api_tokens SET revoked_at = $2 WHERE id = $1 AND revoked_at = 0`, id, now)
	if err != nil {
		return fmt.Errorf("revoke api token: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("revoke api token %s: %w", id, store.ErrNotFound)
	}
	return nil
}

func (q *queries) InsertAudit(ctx context.Context, a store.AuditRecord) (int64, error) {
	args := auditArgs(a)
	var id int64
	err := q.q.QueryRowContext(ctx, `INSERT INTO audit_log (`+auditInsertCols+`) VALUES (`+placeholders(1, len(args))+`) RETURNING id`, args...).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert audit: %w", err)
	}
	return id, nil
}

// auditInsertCols are the columns an audit record is inserted with (its
// id is drawn by the database).
const auditInsertCols = `at, actor, action, target, detail`

// auditArgs are a's values in auditInsertCols' order.
func auditArgs(a store.AuditRecord) []any {
	detail := string(a.Detail)
	if detail == "" {
		detail = "{}"
	}
	return []any{a.At, a.Actor, a.Action, a.Target, detail}
}

func (q *queries) ListAudit(ctx context.Context, p store.ListAuditParams) ([]store.AuditRecord, error) {
	limit := p.Limit
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	before := p.Before
	if before <= 0 {
		before = 1 << 62
	}
	rows, err := q.q.QueryContext(ctx, `SELECT id, at, actor, action, target, detail FROM audit_log WHERE id < $1 ORDER BY id DESC LIMIT $2`, before, limit)
	if err != nil {
		return nil, fmt.Errorf("list audit: %w", err)
	}
	defer rows.Close()
	var out []store.AuditRecord
	for rows.Next() {
		var a store.AuditRecord
		var detail string
		if err := rows.Scan(&a.ID, &a.At, &a.Actor, &a.Action, &a.Target, &detail); err != nil {
			return nil, fmt.Errorf("list audit: %w", err)
		}
		a.Detail = []byte(detail)
		out = append(out, a)
	}
	return out, rows.Err()
}

func (q *queries) ListCostedSteps(ctx context.Context, since, until int64) ([]store.Step, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+stepCols+` FROM steps WHERE cost_usd <> 0 AND ended_at >= $1 AND ended_at < $2`, since, until)
	if err != nil {
		return nil, fmt.Errorf("list costed steps: %w", err)
	}
	defer rows.Close()
	var out []store.Step
	for rows.Next() {
		s, err := scanStep(rows)
		if err != nil {
			return nil, fmt.Errorf("list costed steps: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func (q *queries) CountMissionsByStatus(ctx context.Context) (map[string]int, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT status, COUNT(*) FROM missions GROUP BY status`)
	if err != nil {
		return nil, fmt.Errorf("count missions: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, fmt.Errorf("count missions: %w", err)
		}
		out[s] = n
	}
	return out, rows.Err()
}
