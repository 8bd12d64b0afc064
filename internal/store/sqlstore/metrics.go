package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

// MetricCounts reads the scrape-time totals in one pass over runs, steps,
// waits and missions. A reconcile question is the wait whose payload the
// kernel marked "reconcile":true (json.Marshal's compact form; a model's
// text inside a payload is escaped and cannot match).
func (q *queries) MetricCounts(ctx context.Context) (store.MetricCounts, error) {
	out := store.MetricCounts{RunsByStatus: map[string]int{}}
	rows, err := q.q.QueryContext(ctx, `SELECT status, COUNT(*) FROM runs GROUP BY status`)
	if err != nil {
		return out, fmt.Errorf("count runs: %w", err)
	}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			rows.Close()
			return out, fmt.Errorf("count runs: %w", err)
		}
		out.RunsByStatus[s] = n
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return out, fmt.Errorf("count runs: %w", err)
	}
	rows, err = q.q.QueryContext(ctx, `SELECT kind, status, COUNT(*) FROM steps GROUP BY kind, status ORDER BY kind, status`)
	if err != nil {
		return out, fmt.Errorf("count steps: %w", err)
	}
	for rows.Next() {
		var c store.StepCount
		if err := rows.Scan(&c.Kind, &c.Status, &c.N); err != nil {
			rows.Close()
			return out, fmt.Errorf("count steps: %w", err)
		}
		out.Steps = append(out.Steps, c)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return out, fmt.Errorf("count steps: %w", err)
	}
	if err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM waits WHERE payload LIKE '%"reconcile":true%'`).Scan(&out.ReconcileAsks); err != nil {
		return out, fmt.Errorf("count reconcile questions: %w", err)
	}
	if err := q.q.QueryRowContext(ctx, `SELECT COALESCE(SUM(spent_usd), 0) FROM missions`).Scan(&out.SpentUSD); err != nil {
		return out, fmt.Errorf("sum spend: %w", err)
	}
	return out, nil
}
