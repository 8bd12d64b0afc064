package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

const stepCols = `run_id, seq, kind, name, effect, request_hash, request, status, idem_key, result, error, usage, cost_usd, wake_at, started_at, ended_at, attempt`

func scanStep(sc interface{ Scan(...any) error }) (store.Step, error) {
	var s store.Step
	var req string
	var result, errJSON, usage sql.NullString
	err := sc.Scan(&s.RunID, &s.Seq, &s.Kind, &s.Name, &s.Effect, &s.RequestHash, &req, &s.Status, &s.IdemKey, &result, &errJSON, &usage, &s.CostUSD, &s.WakeAt, &s.StartedAt, &s.EndedAt, &s.Attempt)
	s.Request, s.Result, s.Error, s.Usage = []byte(req), rawJSON(result), rawJSON(errJSON), rawJSON(usage)
	return s, err
}

func (q *queries) ListSteps(ctx context.Context, runID string, afterSeq int, limit int) ([]store.Step, error) {
	if limit <= 0 {
		limit = 1 << 30
	}
	rows, err := q.q.QueryContext(ctx, `SELECT `+stepCols+` FROM steps WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, runID, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("list steps: %w", err)
	}
	defer rows.Close()
	var out []store.Step
	for rows.Next() {
		s, err := scanStep(rows)
		if err != nil {
			return nil, fmt.Errorf("list steps: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func (q *queries) GetStep(ctx context.Context, runID string, seq int) (store.Step, error) {
	s, err := scanStep(q.q.QueryRowContext(ctx, `SELECT `+stepCols+` FROM steps WHERE run_id = $1 AND seq = $2`, runID, seq))
	if err != nil {
		return s, notFound(err, "get step")
	}
	return s, nil
}

func (q *queries) InsertStep(ctx context.Context, s store.Step) error {
	res, err := q.q.ExecContext(ctx, `INSERT INTO steps (`+stepCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17)
ON CONFLICT (run_id, seq) DO NOTHING`, stepArgs(s, nil)...)
	if err != nil {
		return fmt.Errorf("insert step: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("insert step %s/%d: %w", s.RunID, s.Seq, store.ErrConflict)
	}
	return nil
}

func (q *queries) InsertSteps(ctx context.Context, ss []store.Step) error {
	for len(ss) > 0 {
		n := min(len(ss), store.MaxStepsPerInsert)
		values, args := valuesRows(n, stepArity, make([]any, 0, n*stepArity), func(i int, args []any) []any { return stepArgs(ss[i], args) })
		res, err := q.q.ExecContext(ctx, `INSERT INTO steps (`+stepCols+`) VALUES `+values+`
ON CONFLICT (run_id, seq) DO NOTHING`, args...)
		if err != nil {
			return fmt.Errorf("insert %d steps: %w", n, err)
		}
		if got, _ := res.RowsAffected(); got != int64(n) {
			return fmt.Errorf("insert steps %s/%d to %d: %d of %d were recorded already: %w", ss[0].RunID, ss[0].Seq, ss[n-1].Seq, int64(n)-got, n, store.ErrConflict)
		}
		ss = ss[n:]
	}
	return nil
}

// stepArity is the number of stepCols.
const stepArity = 17

// stepArgs appends s's values in stepCols' order to args.
func stepArgs(s store.Step, args []any) []any {
	return append(args, s.RunID, s.Seq, s.Kind, s.Name, s.Effect, s.RequestHash, string(s.Request), s.Status, s.IdemKey,
		nullJSON(s.Result), nullJSON(s.Error), nullJSON(s.Usage), s.CostUSD, s.WakeAt, s.StartedAt, s.EndedAt, s.Attempt)
}

func (q *queries) FinishStep(ctx context.Context, p store.FinishStepParams) error {
	res, err := q.q.ExecContext(ctx, `UPDATE steps SET status = $3, result = $4, error = $5, usage = $6, cost_usd = $7, ended_at = $8
WHERE run_id = $1 AND seq = $2 AND status IN ('started', 'needs_reconcile')`,
		p.RunID, p.Seq, p.Status, nullJSON(p.Result), nullJSON(p.Error), nullJSON(p.Usage), p.CostUSD, p.Now)
	if err != nil {
		return fmt.Errorf("finish step: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("finish step %s/%d: %w", p.RunID, p.Seq, store.ErrConflict)
	}
	return nil
}

func (q *queries) MarkStepNeedsReconcile(ctx context.Context, runID string, seq int) error {
	_, err := q.q.ExecContext(ctx, `UPDATE steps SET status = 'needs_reconcile' WHERE run_id = $1 AND seq = $2 AND status = 'started'`, runID, seq)
	if err != nil {
		return fmt.Errorf("mark step needs_reconcile: %w", err)
	}
	return nil
}

func (q *queries) RetryStep(ctx context.Context, p store.RetryStepParams) error {
	res, err := q.q.ExecContext(ctx, `UPDATE steps SET status = 'started', attempt = attempt + 1, started_at = $4
WHERE run_id = $1 AND seq = $2 AND status = 'needs_reconcile' AND attempt = $3`, p.RunID, p.Seq, p.Attempt, p.Now)
	if err != nil {
		return fmt.Errorf("retry step: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("retry step %s/%d attempt %d: %w", p.RunID, p.Seq, p.Attempt, store.ErrConflict)
	}
	return nil
}
