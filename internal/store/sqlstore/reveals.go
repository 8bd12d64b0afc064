package sqlstore

import (
	"context"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

func (q *queries) InsertAgentReveal(ctx context.Context, r store.AgentReveal) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO agent_reveals (operation_id, agent_id, created_at, opened_at) VALUES ($1,$2,$3,0)
ON CONFLICT (operation_id) DO NOTHING`, r.OperationID, r.AgentID, r.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert agent reveal %s: %w", r.OperationID, err)
	}
	return nil
}

// revealFrom selects a reveal with its agent's name and package.
const revealFrom = `SELECT r.operation_id, r.agent_id, r.created_at, r.opened_at, COALESCE(a.name, ''), COALESCE(a.package_id, '')
FROM agent_reveals r LEFT JOIN agents a ON a.id = r.agent_id`

func scanReveal(sc interface{ Scan(...any) error }) (store.AgentReveal, error) {
	var r store.AgentReveal
	err := sc.Scan(&r.OperationID, &r.AgentID, &r.CreatedAt, &r.OpenedAt, &r.AgentName, &r.PackageID)
	return r, err
}

func (q *queries) ListPendingAgentReveals(ctx context.Context, limit int) ([]store.AgentReveal, error) {
	query := revealFrom + ` WHERE r.opened_at = 0 ORDER BY r.created_at, r.operation_id`
	args := []any{}
	if limit > 0 {
		query += ` LIMIT $1`
		args = append(args, limit)
	}
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list pending agent reveals: %w", err)
	}
	defer rows.Close()
	var out []store.AgentReveal
	for rows.Next() {
		r, err := scanReveal(rows)
		if err != nil {
			return nil, fmt.Errorf("list pending agent reveals: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (q *queries) AckAgentReveal(ctx context.Context, operationID, agentID string, at int64) (store.AgentReveal, error) {
	if _, err := q.q.ExecContext(ctx, `UPDATE agent_reveals SET opened_at = $1 WHERE operation_id = $2 AND agent_id = $3 AND opened_at = 0`,
		at, operationID, agentID); err != nil {
		return store.AgentReveal{}, fmt.Errorf("acknowledge agent reveal %s: %w", operationID, err)
	}
	r, err := scanReveal(q.q.QueryRowContext(ctx, revealFrom+` WHERE r.operation_id = $1 AND r.agent_id = $2`, operationID, agentID))
	if err != nil {
		return r, notFound(err, "acknowledge agent reveal "+operationID)
	}
	return r, nil
}
