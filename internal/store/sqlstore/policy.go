package sqlstore

import (
	"context"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

const ruleCols = `id, project_id, tool, command_prefix, decision, note, created_at`

func (q *queries) InsertPolicyRule(ctx context.Context, r store.PolicyRule) error {
	res, err := q.q.ExecContext(ctx, `INSERT INTO policy_rules (`+ruleCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT (id) DO NOTHING`,
		r.ID, r.ProjectID, r.Tool, r.CommandPrefix, r.Decision, r.Note, r.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert policy rule: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("insert policy rule %s: %w", r.ID, store.ErrConflict)
	}
	return nil
}

func (q *queries) ListPolicyRules(ctx context.Context, projectID string) ([]store.PolicyRule, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+ruleCols+` FROM policy_rules WHERE project_id = '' OR project_id = $1 ORDER BY created_at, id`, projectID)
	if err != nil {
		return nil, fmt.Errorf("list policy rules: %w", err)
	}
	defer rows.Close()
	var out []store.PolicyRule
	for rows.Next() {
		var r store.PolicyRule
		if err := rows.Scan(&r.ID, &r.ProjectID, &r.Tool, &r.CommandPrefix, &r.Decision, &r.Note, &r.CreatedAt); err != nil {
			return nil, fmt.Errorf("list policy rules: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (q *queries) DeletePolicyRule(ctx context.Context, id string) error {
	res, err := q.q.ExecContext(ctx, `DELETE FROM policy_rules WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("delete policy rule: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("delete policy rule %s: %w", id, store.ErrNotFound)
	}
	return nil
}
