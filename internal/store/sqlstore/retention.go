package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

var _ store.Pruner = (*DB)(nil)

// PruneHistory implements store.Pruner: one transaction per mission, so
// that the prune never holds the write lock for long. The candidates are
// found with the missions_ended and audit_target indexes (migration
// 0009/0010) and an EXISTS probe per mission, so a mission already pruned
// costs one index probe, not a scan.
func (db *DB) PruneHistory(ctx context.Context, p store.PruneParams) (store.PruneResult, error) {
	var res store.PruneResult
	if p.Limit <= 0 {
		p.Limit = 100
	}
	type cand struct {
		id            string
		events, audit bool
	}
	var cands []cand
	seen := map[string]int{}
	add := func(query string, cutoff int64, events bool) error {
		if cutoff <= 0 {
			return nil
		}
		rows, err := db.SQL.QueryContext(ctx, query, cutoff, p.Limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			i, ok := seen[id]
			if !ok {
				i = len(cands)
				seen[id] = i
				cands = append(cands, cand{id: id})
			}
			if events {
				cands[i].events = true
			} else {
				cands[i].audit = true
			}
		}
		return rows.Err()
	}
	// A mission is prunable once it has ended and so have all its runs.
	const ended = `m.ended_at > 0 AND m.ended_at < $1 AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.mission_id = m.id AND r.ended_at = 0)`
	if err := add(`SELECT m.id FROM missions m WHERE `+ended+` AND EXISTS (SELECT 1 FROM events e WHERE e.mission_id = m.id) ORDER BY m.ended_at LIMIT $2`, p.EventsBefore, true); err != nil {
		return res, fmt.Errorf("prune history: find missions: %w", err)
	}
	if err := add(`SELECT m.id FROM missions m WHERE `+ended+` AND EXISTS (SELECT 1 FROM audit_log a WHERE a.target = m.id) ORDER BY m.ended_at LIMIT $2`, p.AuditBefore, false); err != nil {
		return res, fmt.Errorf("prune history: find missions: %w", err)
	}
	if len(cands) > p.Limit {
		cands = cands[:p.Limit]
	}
	for _, c := range cands {
		err := db.Tx(ctx, func(q store.Queries) error {
			qq := q.(*queries)
			if c.events {
				n, err := qq.pruneEvents(ctx, c.id, p.Now)
				if err != nil {
					return err
				}
				res.Events += n
			}
			if c.audit {
				r, err := qq.q.ExecContext(ctx, `DELETE FROM audit_log WHERE target = $1`, c.id)
				if err != nil {
					return fmt.Errorf("delete audit records: %w", err)
				}
				n, _ := r.RowsAffected()
				res.Audit += n
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("prune history of mission %s: %w", c.id, err)
		}
		res.Missions++
	}
	return res, nil
}

// pruneEvents deletes a mission's events and records the highest position
// deleted, for the mission and overall (EventsPrunedThrough).
func (q *queries) pruneEvents(ctx context.Context, missionID string, now int64) (int64, error) {
	// On PostgreSQL an event gets its position after commit; give every
	// committed one its position first, so that the mark covers them.
	if err := q.sequence(ctx); err != nil {
		return 0, err
	}
	pos := q.d.EventPos
	var through sql.NullInt64
	if err := q.q.QueryRowContext(ctx, `SELECT MAX(`+pos+`) FROM events WHERE mission_id = $1`, missionID).Scan(&through); err != nil {
		return 0, fmt.Errorf("read the last event position: %w", err)
	}
	r, err := q.q.ExecContext(ctx, `DELETE FROM events WHERE mission_id = $1`, missionID)
	if err != nil {
		return 0, fmt.Errorf("delete events: %w", err)
	}
	n, _ := r.RowsAffected()
	mark := through.Int64
	if _, err := q.q.ExecContext(ctx, `INSERT INTO pruned_missions (mission_id, events_through, pruned_at) VALUES ($1, $2, $3)
		ON CONFLICT (mission_id) DO UPDATE SET events_through = CASE WHEN excluded.events_through > pruned_missions.events_through
		THEN excluded.events_through ELSE pruned_missions.events_through END, pruned_at = excluded.pruned_at`, missionID, mark, now); err != nil {
		return 0, fmt.Errorf("record the pruned mission: %w", err)
	}
	if _, err := q.q.ExecContext(ctx, `INSERT INTO retention_marks (name, pos) VALUES ('events', $1)
		ON CONFLICT (name) DO UPDATE SET pos = CASE WHEN excluded.pos > retention_marks.pos THEN excluded.pos ELSE retention_marks.pos END`, mark); err != nil {
		return 0, fmt.Errorf("record the events mark: %w", err)
	}
	return n, nil
}

// EventsPrunedThrough implements store.Pruner.
func (db *DB) EventsPrunedThrough(ctx context.Context, missionID string) (int64, error) {
	var n int64
	var err error
	if missionID != "" {
		err = db.SQL.QueryRowContext(ctx, `SELECT events_through FROM pruned_missions WHERE mission_id = $1`, missionID).Scan(&n)
	} else {
		err = db.SQL.QueryRowContext(ctx, `SELECT pos FROM retention_marks WHERE name = 'events'`).Scan(&n)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the events prune mark: %w", err)
	}
	return n, nil
}
