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

func (q *queries) ListPendingAgentReveals(ctx context.Context, limit int) ([]store.AgentReveal, error) {
	query := `SELECT operation_id, agent_id, created_at, opened_at FROM agent_reveals WHERE opened_at = 0 ORDER BY created_at, operation_id`
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
		var r store.AgentReveal
		if err := rows.Scan(&r.OperationID, &r.AgentID, &r.CreatedAt, &r.OpenedAt); err != nil {
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
	var r store.AgentReveal
	err := q.q.QueryRowContext(ctx, `SELECT operation_id, agent_id, created_at, opened_at FROM agent_reveals WHERE operation_id = $1 AND agent_id = $2`,
		operationID, agentID).Scan(&r.OperationID, &r.AgentID, &r.CreatedAt, &r.OpenedAt)
	if err != nil {
		return r, notFound(err, "acknowledge agent reveal "+operationID)
	}
	return r, nil
}
