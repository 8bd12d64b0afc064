package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/store"
)

type scanner interface{ Scan(...any) error }

func affected1(res interface{ RowsAffected() (int64, error) }, what string, miss error) error {
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%s: %w", what, miss)
	}
	return nil
}

const agentPackageCols = `package_id, source, origin, dir, manifest, version, state, broken, reviewed_at, updated_at`

func (q *queries) UpsertAgentPackage(ctx context.Context, p store.AgentPackage) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO agent_packages (`+agentPackageCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)
ON CONFLICT (package_id) DO UPDATE SET source = excluded.source, origin = excluded.origin, dir = excluded.dir, manifest = excluded.manifest,
 version = excluded.version, state = excluded.state, broken = excluded.broken, reviewed_at = excluded.reviewed_at, updated_at = excluded.updated_at`,
		p.PackageID, p.Source, p.Origin, p.Dir, string(p.Manifest), p.Version, p.State, p.Broken, p.ReviewedAt, p.UpdatedAt)
	if err != nil {
		return fmt.Errorf("upsert agent package %s: %w", p.PackageID, err)
	}
	return nil
}

func scanAgentPackage(sc scanner) (store.AgentPackage, error) {
	var p store.AgentPackage
	var m string
	err := sc.Scan(&p.PackageID, &p.Source, &p.Origin, &p.Dir, &m, &p.Version, &p.State, &p.Broken, &p.ReviewedAt, &p.UpdatedAt)
	p.Manifest = []byte(m)
	return p, err
}

func (q *queries) GetAgentPackage(ctx context.Context, id string) (store.AgentPackage, error) {
	p, err := scanAgentPackage(q.q.QueryRowContext(ctx, `SELECT `+agentPackageCols+` FROM agent_packages WHERE package_id = $1`, id))
	if err != nil {
		return p, notFound(err, "get agent package")
	}
	return p, nil
}

func (q *queries) ListAgentPackages(ctx context.Context) ([]store.AgentPackage, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+agentPackageCols+` FROM agent_packages ORDER BY package_id`)
	if err != nil {
		return nil, fmt.Errorf("list agent packages: %w", err)
	}
	defer rows.Close()
	var out []store.AgentPackage
	for rows.Next() {
		p, err := scanAgentPackage(rows)
		if err != nil {
			return nil, fmt.Errorf("list agent packages: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

const agentOpCols = `id, identity, idem_key, fingerprint, package_id, request, state, phase, agent_id, workspace, error_code, error_message, guidance, doctor, created_at, updated_at`

func (q *queries) InsertAgentOperation(ctx context.Context, o store.AgentOperation) error {
	res, err := q.q.ExecContext(ctx, `INSERT INTO agent_operations (`+agentOpCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16) ON CONFLICT DO NOTHING`,
		o.ID, o.Identity, o.IdemKey, o.Fingerprint, o.PackageID, string(o.Request), o.State, o.Phase, o.AgentID, o.Workspace,
		o.ErrorCode, o.ErrorMessage, o.Guidance, string(jsonArr(o.Doctor)), o.CreatedAt, o.UpdatedAt)
	if err != nil {
		return fmt.Errorf("insert agent operation: %w", err)
	}
	return affected1(res, "insert agent operation "+o.ID, store.ErrConflict)
}

func jsonArr(b []byte) []byte {
	if len(b) == 0 {
		return []byte("[]")
	}
	return b
}

func scanAgentOp(sc scanner) (store.AgentOperation, error) {
	var o store.AgentOperation
	var req, doc string
	err := sc.Scan(&o.ID, &o.Identity, &o.IdemKey, &o.Fingerprint, &o.PackageID, &req, &o.State, &o.Phase, &o.AgentID, &o.Workspace,
		&o.ErrorCode, &o.ErrorMessage, &o.Guidance, &doc, &o.CreatedAt, &o.UpdatedAt)
	o.Request, o.Doctor = []byte(req), []byte(doc)
	return o, err
}

func (q *queries) GetAgentOperation(ctx context.Context, id string) (store.AgentOperation, error) {
	o, err := scanAgentOp(q.q.QueryRowContext(ctx, `SELECT `+agentOpCols+` FROM agent_operations WHERE id = $1`, id))
	if err != nil {
		return o, notFound(err, "get agent operation")
	}
	return o, nil
}

func (q *queries) GetAgentOperationByKey(ctx context.Context, identity, key string) (store.AgentOperation, error) {
	o, err := scanAgentOp(q.q.QueryRowContext(ctx, `SELECT `+agentOpCols+` FROM agent_operations WHERE identity = $1 AND idem_key = $2`, identity, key))
	if err != nil {
		return o, notFound(err, "get agent operation by key")
	}
	return o, nil
}

func (q *queries) UpdateAgentOperation(ctx context.Context, o store.AgentOperation) error {
	res, err := q.q.ExecContext(ctx, `UPDATE agent_operations SET state = $2, phase = $3, agent_id = $4, workspace = $5, error_code = $6,
 error_message = $7, guidance = $8, doctor = $9, updated_at = $10 WHERE id = $1`,
		o.ID, o.State, o.Phase, o.AgentID, o.Workspace, o.ErrorCode, o.ErrorMessage, o.Guidance, string(jsonArr(o.Doctor)), o.UpdatedAt)
	if err != nil {
		return fmt.Errorf("update agent operation: %w", err)
	}
	return affected1(res, "update agent operation "+o.ID, store.ErrNotFound)
}

func (q *queries) ListAgentOperationsInState(ctx context.Context, states []string) ([]store.AgentOperation, error) {
	if len(states) == 0 {
		return nil, nil
	}
	ph := make([]string, len(states))
	args := make([]any, len(states))
	for i, s := range states {
		ph[i] = fmt.Sprintf("$%d", i+1)
		args[i] = s
	}
	rows, err := q.q.QueryContext(ctx, `SELECT `+agentOpCols+` FROM agent_operations WHERE state IN (`+strings.Join(ph, ",")+`) ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("list agent operations: %w", err)
	}
	defer rows.Close()
	var out []store.AgentOperation
	for rows.Next() {
		o, err := scanAgentOp(rows)
		if err != nil {
			return nil, fmt.Errorf("list agent operations: %w", err)
		}
		out = append(out, o)
	}
	return out, rows.Err()
}

const agentCols = `id, name, package_id, engine, project_id, workspace, operation_id, created_at`

func (q *queries) InsertAgent(ctx context.Context, a store.AgentRecord) error {
	res, err := q.q.ExecContext(ctx, `INSERT INTO agents (`+agentCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8) ON CONFLICT DO NOTHING`,
		a.ID, a.Name, a.PackageID, a.Engine, a.ProjectID, a.Workspace, a.OperationID, a.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert agent: %w", err)
	}
	return affected1(res, "insert agent "+a.ID, store.ErrConflict)
}

func scanAgent(sc scanner) (store.AgentRecord, error) {
	var a store.AgentRecord
	err := sc.Scan(&a.ID, &a.Name, &a.PackageID, &a.Engine, &a.ProjectID, &a.Workspace, &a.OperationID, &a.CreatedAt)
	return a, err
}

func (q *queries) GetAgent(ctx context.Context, id string) (store.AgentRecord, error) {
	a, err := scanAgent(q.q.QueryRowContext(ctx, `SELECT `+agentCols+` FROM agents WHERE id = $1`, id))
	if err != nil {
		return a, notFound(err, "get agent")
	}
	return a, nil
}

func (q *queries) GetAgentByOperation(ctx context.Context, operationID string) (store.AgentRecord, error) {
	a, err := scanAgent(q.q.QueryRowContext(ctx, `SELECT `+agentCols+` FROM agents WHERE operation_id = $1`, operationID))
	if err != nil {
		return a, notFound(err, "get agent by operation")
	}
	return a, nil
}

func (q *queries) ListAgents(ctx context.Context, packageID string, limit int) ([]store.AgentRecord, error) {
	if limit <= 0 {
		limit = -1
	}
	query := `SELECT ` + agentCols + ` FROM agents WHERE ($1 = '' OR package_id = $1) ORDER BY created_at, id`
	args := []any{packageID}
	if limit > 0 {
		query += ` LIMIT $2`
		args = append(args, limit)
	}
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	defer rows.Close()
	var out []store.AgentRecord
	for rows.Next() {
		a, err := scanAgent(rows)
		if err != nil {
			return nil, fmt.Errorf("list agents: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

const agentTurnCols = `id, identity, idem_key, fingerprint, agent_id, mission_id, state, error_code, error_message, created_at, updated_at`

func (q *queries) InsertAgentTurn(ctx context.Context, t store.AgentTurn) error {
	res, err := q.q.ExecContext(ctx, `INSERT INTO agent_turns (`+agentTurnCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11) ON CONFLICT DO NOTHING`,
		t.ID, t.Identity, t.IdemKey, t.Fingerprint, t.AgentID, t.MissionID, t.State, t.ErrorCode, t.ErrorMessage, t.CreatedAt, t.UpdatedAt)
	if err != nil {
		return fmt.Errorf("insert agent turn: %w", err)
	}
	return affected1(res, "insert agent turn "+t.ID, store.ErrConflict)
}

func scanAgentTurn(sc scanner) (store.AgentTurn, error) {
	var t store.AgentTurn
	err := sc.Scan(&t.ID, &t.Identity, &t.IdemKey, &t.Fingerprint, &t.AgentID, &t.MissionID, &t.State, &t.ErrorCode, &t.ErrorMessage, &t.CreatedAt, &t.UpdatedAt)
	return t, err
}

func (q *queries) GetAgentTurn(ctx context.Context, id string) (store.AgentTurn, error) {
	t, err := scanAgentTurn(q.q.QueryRowContext(ctx, `SELECT `+agentTurnCols+` FROM agent_turns WHERE id = $1`, id))
	if err != nil {
		return t, notFound(err, "get agent turn")
	}
	return t, nil
}

func (q *queries) GetAgentTurnByKey(ctx context.Context, identity, key string) (store.AgentTurn, error) {
	t, err := scanAgentTurn(q.q.QueryRowContext(ctx, `SELECT `+agentTurnCols+` FROM agent_turns WHERE identity = $1 AND idem_key = $2`, identity, key))
	if err != nil {
		return t, notFound(err, "get agent turn by key")
	}
	return t, nil
}

func (q *queries) UpdateAgentTurn(ctx context.Context, t store.AgentTurn) error {
	res, err := q.q.ExecContext(ctx, `UPDATE agent_turns SET mission_id = $2, state = $3, error_code = $4, error_message = $5, updated_at = $6 WHERE id = $1`,
		t.ID, t.MissionID, t.State, t.ErrorCode, t.ErrorMessage, t.UpdatedAt)
	if err != nil {
		return fmt.Errorf("update agent turn: %w", err)
	}
	return affected1(res, "update agent turn "+t.ID, store.ErrNotFound)
}
