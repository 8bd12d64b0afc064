package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/store"
)

const runCols = `id, mission_id, parent_run_id, logic, input, status, lease_owner, lease_expires_at, fencing_token, wake_at,
 cancel_requested, budget_usd, budget_turns, budget_wall_sec, usage, spent_usd, turns, result, error, created_at, updated_at, started_at, ended_at,
 lease_host, lease_pid, lease_proc`

func scanRun(sc interface{ Scan(...any) error }) (store.Run, error) {
	var r store.Run
	var input, usage string
	var result sql.NullString
	var cancel int
	err := sc.Scan(&r.ID, &r.MissionID, &r.ParentRunID, &r.Logic, &input, &r.Status, &r.LeaseOwner, &r.LeaseExpiresAt, &r.FencingToken, &r.WakeAt,
		&cancel, &r.BudgetUSD, &r.BudgetTurns, &r.BudgetWallSec, &usage, &r.SpentUSD, &r.Turns, &result, &r.Error, &r.CreatedAt, &r.UpdatedAt, &r.StartedAt, &r.EndedAt,
		&r.Holder.Host, &r.Holder.PID, &r.Holder.Proc)
	r.Input, r.Usage, r.Result = []byte(input), []byte(usage), rawJSON(result)
	r.CancelRequested = cancel != 0
	return r, err
}

func (q *queries) InsertRun(ctx context.Context, r store.Run) error {
	args := runArgs(r)
	_, err := q.q.ExecContext(ctx, `INSERT INTO runs (`+runCols+`) VALUES (`+placeholders(1, len(args))+`)`, args...)
	if err != nil {
		return fmt.Errorf("insert run: %w", err)
	}
	return nil
}

// runArgs are r's values in runCols' order, as inserted.
func runArgs(r store.Run) []any {
	input, usage := string(r.Input), string(r.Usage)
	if input == "" {
		input = "{}"
	}
	if usage == "" {
		usage = "{}"
	}
	return []any{r.ID, r.MissionID, r.ParentRunID, r.Logic, input, r.Status, r.LeaseOwner, r.LeaseExpiresAt, r.FencingToken, r.WakeAt,
		b2i(r.CancelRequested), r.BudgetUSD, r.BudgetTurns, r.BudgetWallSec, usage, r.SpentUSD, r.Turns, nullJSON(r.Result), r.Error, r.CreatedAt, r.UpdatedAt, r.StartedAt, r.EndedAt,
		r.Holder.Host, r.Holder.PID, r.Holder.Proc}
}

func (q *queries) GetRun(ctx context.Context, id string) (store.Run, error) {
	r, err := scanRun(q.q.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = $1`, id))
	if err != nil {
		return r, notFound(err, "get run")
	}
	return r, nil
}

func (q *queries) ListRunsByMission(ctx context.Context, missionID string) ([]store.Run, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+runCols+` FROM runs WHERE mission_id = $1 ORDER BY created_at, id`, missionID)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	var out []store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (q *queries) DescendantRunIDs(ctx context.Context, id string) ([]string, error) {
	rows, err := q.q.QueryContext(ctx, `WITH RECURSIVE tree(id) AS (
  SELECT id FROM runs WHERE id = $1
  UNION ALL SELECT r.id FROM runs r JOIN tree t ON r.parent_run_id = t.id)
SELECT id FROM tree`, id)
	if err != nil {
		return nil, fmt.Errorf("descendant runs: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("descendant runs: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// runFilter appends the logic and mission conditions of a claim to args.
func runFilter(args []any, logics []string, missionID string) ([]any, string) {
	filter := ""
	if len(logics) > 0 {
		filter += " AND logic IN ("
		for i, l := range logics {
			args = append(args, l)
			if i > 0 {
				filter += ","
			}
			filter += fmt.Sprintf("$%d", len(args))
		}
		filter += ")"
	}
	if missionID != "" {
		args = append(args, missionID)
		filter += fmt.Sprintf(" AND mission_id = $%d", len(args))
	}
	return args, filter
}

func (q *queries) ClaimRun(ctx context.Context, p store.ClaimRunParams) (store.Run, error) {
	args, filter := runFilter([]any{p.WorkerID, p.Now, p.LeaseUntil, p.Holder.Host, p.Holder.PID, p.Holder.Proc}, p.Logics, p.MissionID)
	query := `UPDATE runs SET status = 'running', lease_owner = $1, lease_expires_at = $3, fencing_token = fencing_token + 1,
 wake_at = 0, updated_at = $2, lease_host = $4, lease_pid = $5, lease_proc = $6,
 started_at = CASE WHEN started_at = 0 THEN $2 ELSE started_at END
WHERE id = (SELECT id FROM runs
  WHERE ((status = 'queued' AND wake_at <= $2) OR (status = 'running' AND lease_expires_at < $2))` + filter + `
  ORDER BY created_at, id LIMIT 1 ` + q.d.SkipLocked + `)
RETURNING ` + runCols
	r, err := scanRun(q.q.QueryRowContext(ctx, query, args...))
	if err != nil {
		return r, notFound(err, "claim run")
	}
	return r, nil
}

// Claimable reports whether a claim with p would find a run: one queued
// and due, or running with an expired lease (ClaimRun's condition), by one
// read.
func (db *DB) Claimable(ctx context.Context, p store.ClaimRunParams) (bool, error) {
	args, filter := runFilter([]any{p.Now}, p.Logics, p.MissionID)
	var ok bool
	err := db.Queries.(*queries).q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM runs
  WHERE ((status = 'queued' AND wake_at <= $1) OR (status = 'running' AND lease_expires_at < $1))`+filter+`)`, args...).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("look for a run to claim: %w", err)
	}
	return ok, nil
}

// ClaimStart claims like ClaimRun and, atomically with the claim, sets a
// root run's mission running and inserts run.claimed with the payload
// {"replaySteps":<steps journaled>,"runId":<id>,"worker":<p.WorkerID>}
// (sorted keys, compact: the kernel's canonical form). On PostgreSQL that
// is one statement (a writable CTE); elsewhere one transaction. It returns
// the run, as RETURNING shows it, and its journal.
func (db *DB) ClaimStart(ctx context.Context, p store.ClaimRunParams) (store.Run, []store.Step, error) {
	var worker bytes.Buffer
	enc := json.NewEncoder(&worker)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p.WorkerID); err != nil {
		return store.Run{}, nil, fmt.Errorf("claim run: %w", err)
	}
	workerJSON := strings.TrimSuffix(worker.String(), "\n")
	if !db.D.WritableCTE {
		var run store.Run
		var steps []store.Step
		err := db.Tx(ctx, func(q store.Queries) error {
			var err error
			if run, err = q.ClaimRun(ctx, p); err != nil {
				return err
			}
			if steps, err = q.ListSteps(ctx, run.ID, -1, 0); err != nil {
				return err
			}
			if run.ParentRunID == "" {
				if err := q.UpdateMissionStatus(ctx, store.UpdateMissionStatusParams{ID: run.MissionID, Status: "running", Now: p.Now}); err != nil {
					return err
				}
			}
			runID, _ := json.Marshal(run.ID)
			payload := fmt.Sprintf(`{"replaySteps":%d,"runId":%s,"worker":%s}`, len(steps), runID, workerJSON)
			_, err = q.InsertEvent(ctx, store.Event{MissionID: run.MissionID, RunID: run.ID, Kind: "run.claimed", Payload: []byte(payload), CreatedAt: p.Now})
			return err
		})
		return run, steps, err
	}
	args, filter := runFilter([]any{p.WorkerID, p.Now, p.LeaseUntil, p.Holder.Host, p.Holder.PID, p.Holder.Proc}, p.Logics, p.MissionID)
	args = append(args, workerJSON)
	query := `WITH c AS (UPDATE runs SET status = 'running', lease_owner = $1, lease_expires_at = $3, fencing_token = fencing_token + 1,
 wake_at = 0, updated_at = $2, lease_host = $4, lease_pid = $5, lease_proc = $6,
 started_at = CASE WHEN started_at = 0 THEN $2 ELSE started_at END
WHERE id = (SELECT id FROM runs
  WHERE ((status = 'queued' AND wake_at <= $2) OR (status = 'running' AND lease_expires_at < $2))` + filter + `
  ORDER BY created_at, id LIMIT 1 ` + db.D.SkipLocked + `)
RETURNING ` + runCols + `),
m AS (UPDATE missions SET status = 'running', ended_at = 0, updated_at = $2 WHERE id = (SELECT mission_id FROM c WHERE parent_run_id = '')),
e AS (INSERT INTO events (mission_id, run_id, kind, payload, trust, created_at)
  SELECT mission_id, id, 'run.claimed', '{"replaySteps":' || (SELECT count(*) FROM steps s WHERE s.run_id = c.id) || ',"runId":' || to_json(id)::text || ',"worker":' || $` + fmt.Sprint(len(args)) + ` || '}', 'system', $2 FROM c)
SELECT ` + runCols + ` FROM c`
	run, err := scanRun(db.Queries.(*queries).q.QueryRowContext(ctx, query, args...))
	if err != nil {
		return run, nil, notFound(err, "claim run")
	}
	steps, err := db.ListSteps(ctx, run.ID, -1, 0)
	if err != nil {
		return run, nil, fmt.Errorf("claim run: load journal: %w", err)
	}
	return run, steps, nil
}

func (q *queries) ListLeasedRuns(ctx context.Context, p store.ListLeasedRunsParams) ([]store.Run, error) {
	args, filter := runFilter([]any{p.Host, p.Now}, p.Logics, p.MissionID)
	rows, err := q.q.QueryContext(ctx, `SELECT `+runCols+` FROM runs
WHERE status = 'running' AND lease_expires_at >= $2 AND lease_host = $1`+filter+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list leased runs: %w", err)
	}
	defer rows.Close()
	var out []store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("list leased runs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (q *queries) TakeOverRun(ctx context.Context, p store.TakeOverRunParams) (store.Run, error) {
	r, err := scanRun(q.q.QueryRowContext(ctx, `UPDATE runs SET lease_owner = $4, lease_expires_at = $5, fencing_token = fencing_token + 1,
 updated_at = $6, lease_host = $7, lease_pid = $8, lease_proc = $9
WHERE id = $1 AND lease_owner = $2 AND fencing_token = $3 AND status = 'running'
RETURNING `+runCols, p.Old.RunID, p.Old.Owner, p.Old.Token, p.WorkerID, p.LeaseUntil, p.Now, p.Holder.Host, p.Holder.PID, p.Holder.Proc))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("take over run %s: %w", p.Old.RunID, store.ErrConflict)
	}
	if err != nil {
		return r, fmt.Errorf("take over run %s: %w", p.Old.RunID, err)
	}
	return r, nil
}

func (q *queries) FenceRun(ctx context.Context, f store.Fence, now, leaseUntil int64) (bool, error) {
	var cancel int
	var err error
	if leaseUntil == 0 {
		// A check that writes no row version: inside a transaction it
		// holds the run row (PostgreSQL: FOR NO KEY UPDATE, which a
		// claimer's FOR UPDATE SKIP LOCKED skips; SQLite: the
		// transaction's write lock) until commit.
		err = q.q.QueryRowContext(ctx, `SELECT cancel_requested FROM runs
WHERE id = $1 AND lease_owner = $2 AND fencing_token = $3 AND status = 'running' `+q.d.RowLock, f.RunID, f.Owner, f.Token).Scan(&cancel)
	} else {
		err = q.q.QueryRowContext(ctx, `UPDATE runs SET updated_at = $4, lease_expires_at = $5
WHERE id = $1 AND lease_owner = $2 AND fencing_token = $3 AND status = 'running'
RETURNING cancel_requested`, f.RunID, f.Owner, f.Token, now, leaseUntil).Scan(&cancel)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("fence run %s: %w", f.RunID, store.ErrFenced)
	}
	if err != nil {
		return false, fmt.Errorf("fence run %s: %w", f.RunID, err)
	}
	return cancel != 0, nil
}

func (q *queries) RenewLeases(ctx context.Context, p store.RenewLeasesParams) ([]store.RenewedLease, error) {
	if len(p.Held) == 0 {
		return nil, nil
	}
	pairs := make([][2]any, len(p.Held))
	for i, h := range p.Held {
		pairs[i] = [2]any{h.RunID, h.Token}
	}
	held, err := json.Marshal(pairs)
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	// updated_at is left alone: the lease column is in no index, so on
	// PostgreSQL a renewal is a HOT update.
	rows, err := q.q.QueryContext(ctx, `UPDATE runs SET lease_expires_at = $2
WHERE lease_owner = $1 AND status = 'running' AND (id, fencing_token) IN (`+q.d.HeldLeases+`)
RETURNING id, fencing_token, cancel_requested`, p.Owner, p.LeaseUntil, string(held))
	if err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	defer rows.Close()
	out := make([]store.RenewedLease, 0, len(p.Held))
	for rows.Next() {
		var l store.RenewedLease
		var cancel int
		if err := rows.Scan(&l.RunID, &l.Token, &cancel); err != nil {
			return nil, fmt.Errorf("renew leases: %w", err)
		}
		l.CancelRequested = cancel != 0
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("renew leases: %w", err)
	}
	return out, nil
}

func (q *queries) SetRunState(ctx context.Context, p store.SetRunStateParams) error {
	res, err := q.q.ExecContext(ctx, `UPDATE runs SET status = $4, wake_at = $5, result = COALESCE($6, result), error = $7,
 ended_at = $8, updated_at = $9, lease_owner = '', lease_expires_at = 0
WHERE id = $1 AND lease_owner = $2 AND fencing_token = $3 AND status = 'running'`,
		p.Fence.RunID, p.Fence.Owner, p.Fence.Token, p.Status, p.WakeAt, nullJSON(p.Result), p.Error, p.EndedAt, p.Now)
	if err != nil {
		return fmt.Errorf("set run state: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("set run state %s: %w", p.Fence.RunID, store.ErrFenced)
	}
	return nil
}

// EndRun moves a fenced run to its final state, mirrors it on its
// mission when mission.ID is set, and inserts e, atomically: on PostgreSQL
// in one statement (one round trip), elsewhere in one transaction. It
// returns ErrFenced, writing nothing, when p.Fence no longer holds the run.
func (db *DB) EndRun(ctx context.Context, p store.SetRunStateParams, mission store.UpdateMissionStatusParams, e store.Event) error {
	if !db.D.WritableCTE {
		return db.Tx(ctx, func(q store.Queries) error {
			if err := q.SetRunState(ctx, p); err != nil {
				return err
			}
			if mission.ID != "" {
				if err := q.UpdateMissionStatus(ctx, mission); err != nil {
					return err
				}
			}
			_, err := q.InsertEvent(ctx, e)
			return err
		})
	}
	var n int
	err := db.Queries.(*queries).q.QueryRowContext(ctx, `WITH r AS (UPDATE runs SET status = $4, wake_at = $5, result = COALESCE($6, result), error = $7,
 ended_at = $8, updated_at = $9, lease_owner = '', lease_expires_at = 0
 WHERE id = $1 AND lease_owner = $2 AND fencing_token = $3 AND status = 'running' RETURNING id),
m AS (UPDATE missions SET status = $11, result = COALESCE($12, result), ended_at = $13, updated_at = $14
 WHERE id = $10 AND EXISTS (SELECT 1 FROM r)),
e AS (INSERT INTO events (mission_id, run_id, kind, payload, trust, created_at) SELECT $15, $16, $17, $18, 'system', $19 FROM r)
SELECT count(*) FROM r`,
		p.Fence.RunID, p.Fence.Owner, p.Fence.Token, p.Status, p.WakeAt, nullJSON(p.Result), p.Error, p.EndedAt, p.Now,
		mission.ID, mission.Status, nullJSON(mission.Result), mission.EndedAt, mission.Now,
		e.MissionID, e.RunID, e.Kind, string(e.Payload), e.CreatedAt).Scan(&n)
	if err != nil {
		return fmt.Errorf("end run: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("end run %s: %w", p.Fence.RunID, store.ErrFenced)
	}
	return nil
}

func (q *queries) AddRunUsage(ctx context.Context, p store.AddUsageParams) error {
	_, err := q.q.ExecContext(ctx, `UPDATE runs SET usage = $2, spent_usd = spent_usd + $3, turns = turns + $4,
 next_seq = CASE WHEN next_seq < $5 THEN $5 ELSE next_seq END, updated_at = $6 WHERE id = $1`,
		p.RunID, string(p.Usage), p.USD, p.Turns, p.NextSeq, p.Now)
	if err != nil {
		return fmt.Errorf("add run usage: %w", err)
	}
	return nil
}

func (q *queries) RequestRunCancel(ctx context.Context, id string, now int64) (string, error) {
	var status string
	err := q.q.QueryRowContext(ctx, `UPDATE runs SET cancel_requested = 1, updated_at = $2 WHERE id = $1 RETURNING status`, id, now).Scan(&status)
	if err != nil {
		return "", notFound(err, "request run cancel")
	}
	return status, nil
}

func (q *queries) CancelIdleRun(ctx context.Context, id string, now int64) (bool, error) {
	res, err := q.q.ExecContext(ctx, `UPDATE runs SET status = 'cancelled', ended_at = $2, updated_at = $2, lease_owner = '', lease_expires_at = 0
WHERE id = $1 AND status IN ('queued', 'waiting')`, id, now)
	if err != nil {
		return false, fmt.Errorf("cancel idle run: %w", err)
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}

func (q *queries) RequeueWaitingRun(ctx context.Context, id string, now int64) error {
	_, err := q.q.ExecContext(ctx, `UPDATE runs SET status = 'queued', wake_at = 0, updated_at = $2 WHERE id = $1 AND status = 'waiting'`, id, now)
	if err != nil {
		return fmt.Errorf("requeue run: %w", err)
	}
	return nil
}

func (q *queries) MarkRunStarted(ctx context.Context, id string, now int64) error {
	_, err := q.q.ExecContext(ctx, `UPDATE runs SET started_at = $2 WHERE id = $1 AND started_at = 0`, id, now)
	if err != nil {
		return fmt.Errorf("mark run started: %w", err)
	}
	return nil
}
