package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

func (q *queries) InsertOwnerMessage(ctx context.Context, runID, text string, now int64) (int64, error) {
	var id int64
	err := q.q.QueryRowContext(ctx, `INSERT INTO owner_messages (run_id, text, created_at) VALUES ($1,$2,$3) RETURNING id`, runID, text, now).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("insert owner message: %w", err)
	}
	return id, nil
}

func (q *queries) ListOwnerMessages(ctx context.Context, runID string, afterID int64) ([]store.OwnerMessage, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT id, run_id, text, created_at FROM owner_messages WHERE run_id = $1 AND id > $2 ORDER BY id`, runID, afterID)
	if err != nil {
		return nil, fmt.Errorf("list owner messages: %w", err)
	}
	defer rows.Close()
	var out []store.OwnerMessage
	for rows.Next() {
		var m store.OwnerMessage
		if err := rows.Scan(&m.ID, &m.RunID, &m.Text, &m.CreatedAt); err != nil {
			return nil, fmt.Errorf("list owner messages: %w", err)
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

const artifactCols = `sha256, name, mime, size, run_id, step_seq, created_at`

func (q *queries) InsertArtifact(ctx context.Context, a store.Artifact) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO artifacts (`+artifactCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7) ON CONFLICT DO NOTHING`,
		a.SHA256, a.Name, a.Mime, a.Size, a.RunID, a.StepSeq, a.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert artifact: %w", err)
	}
	return nil
}

func scanArtifact(sc interface{ Scan(...any) error }) (store.Artifact, error) {
	var a store.Artifact
	err := sc.Scan(&a.SHA256, &a.Name, &a.Mime, &a.Size, &a.RunID, &a.StepSeq, &a.CreatedAt)
	return a, err
}

func (q *queries) GetArtifact(ctx context.Context, sha string) (store.Artifact, error) {
	a, err := scanArtifact(q.q.QueryRowContext(ctx, `SELECT `+artifactCols+` FROM artifacts WHERE sha256 = $1 ORDER BY created_at LIMIT 1`, sha))
	if err != nil {
		return a, notFound(err, "get artifact")
	}
	return a, nil
}

func (q *queries) ListArtifacts(ctx context.Context, runID string) ([]store.Artifact, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+artifactCols+` FROM artifacts WHERE run_id = $1 ORDER BY created_at, name`, runID)
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	defer rows.Close()
	var out []store.Artifact
	for rows.Next() {
		a, err := scanArtifact(rows)
		if err != nil {
			return nil, fmt.Errorf("list artifacts: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func (q *queries) AddSpend(ctx context.Context, day string, usd float64) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO spend_days (day, usd) VALUES ($1, $2) ON CONFLICT (day) DO UPDATE SET usd = spend_days.usd + excluded.usd`, day, usd)
	if err != nil {
		return fmt.Errorf("add spend: %w", err)
	}
	return nil
}

func (q *queries) GetSpend(ctx context.Context, day string) (float64, error) {
	var usd float64
	err := q.q.QueryRowContext(ctx, `SELECT usd FROM spend_days WHERE day = $1`, day).Scan(&usd)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("get spend: %w", err)
	}
	return usd, nil
}

func (q *queries) UpsertWorker(ctx context.Context, w store.Worker) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO workers (id, version, hostname, started_at, last_seen) VALUES ($1,$2,$3,$4,$5)
ON CONFLICT (id) DO UPDATE SET last_seen = excluded.last_seen, version = excluded.version`, w.ID, w.Version, w.Hostname, w.StartedAt, w.LastSeen)
	if err != nil {
		return fmt.Errorf("upsert worker: %w", err)
	}
	return nil
}

func (q *queries) DeleteWorker(ctx context.Context, id string) error {
	if _, err := q.q.ExecContext(ctx, `DELETE FROM workers WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete worker: %w", err)
	}
	return nil
}

func (q *queries) ListWorkers(ctx context.Context) ([]store.Worker, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT id, version, hostname, started_at, last_seen FROM workers ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("list workers: %w", err)
	}
	defer rows.Close()
	var out []store.Worker
	for rows.Next() {
		var w store.Worker
		if err := rows.Scan(&w.ID, &w.Version, &w.Hostname, &w.StartedAt, &w.LastSeen); err != nil {
			return nil, fmt.Errorf("list workers: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

const priceCols = `model, provider, input_per_mtok, output_per_mtok, cache_read_per_mtok, cache_write_per_mtok, context_window, updated_at`

func (q *queries) UpsertModelPrice(ctx context.Context, p store.ModelPrice) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO model_prices (`+priceCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8)
ON CONFLICT (model) DO UPDATE SET provider = excluded.provider, input_per_mtok = excluded.input_per_mtok, output_per_mtok = excluded.output_per_mtok,
 cache_read_per_mtok = excluded.cache_read_per_mtok, cache_write_per_mtok = excluded.cache_write_per_mtok, context_window = excluded.context_window, updated_at = excluded.updated_at`,
		p.Model, p.Provider, p.InputPerMTok, p.OutputPerMTok, p.CacheReadPerMTok, p.CacheWritePerMTok, p.ContextWindow, p.UpdatedAt)
	if err != nil {
		return fmt.Errorf("upsert model price: %w", err)
	}
	return nil
}

func scanPrice(sc interface{ Scan(...any) error }) (store.ModelPrice, error) {
	var p store.ModelPrice
	err := sc.Scan(&p.Model, &p.Provider, &p.InputPerMTok, &p.OutputPerMTok, &p.CacheReadPerMTok, &p.CacheWritePerMTok, &p.ContextWindow, &p.UpdatedAt)
	return p, err
}

func (q *queries) GetModelPrice(ctx context.Context, model string) (store.ModelPrice, error) {
	p, err := scanPrice(q.q.QueryRowContext(ctx, `SELECT `+priceCols+` FROM model_prices WHERE model = $1`, model))
	if err != nil {
		return p, notFound(err, "get model price")
	}
	return p, nil
}

func (q *queries) ListModelPrices(ctx context.Context) ([]store.ModelPrice, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+priceCols+` FROM model_prices ORDER BY provider, model`)
	if err != nil {
		return nil, fmt.Errorf("list model prices: %w", err)
	}
	defer rows.Close()
	var out []store.ModelPrice
	for rows.Next() {
		p, err := scanPrice(rows)
		if err != nil {
			return nil, fmt.Errorf("list model prices: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

func (q *queries) GetSetting(ctx context.Context, key string) ([]byte, error) {
	var v string
	err := q.q.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&v)
	if err != nil {
		return nil, notFound(err, "get setting")
	}
	return []byte(v), nil
}

func (q *queries) PutSetting(ctx context.Context, key string, value []byte, now int64) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ($1,$2,$3)
ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, key, string(value), now)
	if err != nil {
		return fmt.Errorf("put setting: %w", err)
	}
	return nil
}
