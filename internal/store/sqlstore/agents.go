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

func (q *queries) ReviewAgentPackage(ctx context.Context, id, version string, reviewedAt int64) error {
	res, err := q.q.ExecContext(ctx, `UPDATE agent_packages SET reviewed_at = $3 WHERE package_id = $1 AND version = $2`, id, version, reviewedAt)
	if err != nil {
		return fmt.Errorf("review agent package %s: %w", id, err)
	}
	return affected1(res, "review agent package "+id+" at version "+version, store.ErrConflict)
}

const agentOpCols = `id, identity, idem_key, fingerprint, package_id, request, state, phase, agent_id, workspace, error_code, error_message, guidance, doctor, created_at, updated_at, owner, lease_until`

const activeOps = `('accepted','running')`

func (q *queries) InsertAgentOperation(ctx context.Context, o store.AgentOperation) error {
	res, err := q.q.ExecContext(ctx, `INSERT INTO agent_operations (`+agentOpCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18) ON CONFLICT DO NOTHING`,
		o.ID, o.Identity, o.IdemKey, o.Fingerprint, o.PackageID, string(o.Request), o.State, o.Phase, o.AgentID, o.Workspace,
		o.ErrorCode, o.ErrorMessage, o.Guidance, string(jsonArr(o.Doctor)), o.CreatedAt, o.UpdatedAt, o.Owner, o.LeaseUntil)
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
		&o.ErrorCode, &o.ErrorMessage, &o.Guidance, &doc, &o.CreatedAt, &o.UpdatedAt, &o.Owner, &o.LeaseUntil)
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
 error_message = $7, guidance = $8, doctor = $9, updated_at = $10 WHERE id = $1 AND owner = $11`,
		o.ID, o.State, o.Phase, o.AgentID, o.Workspace, o.ErrorCode, o.ErrorMessage, o.Guidance, string(jsonArr(o.Doctor)), o.UpdatedAt, o.Owner)
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

func (q *queries) RenewAgentOperationLeases(ctx context.Context, owner string, leaseUntil int64) (int64, error) {
	res, err := q.q.ExecContext(ctx, `UPDATE agent_operations SET lease_until = $2 WHERE owner = $1 AND state IN `+activeOps, owner, leaseUntil)
	if err != nil {
		return 0, fmt.Errorf("renew agent operation leases: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

func (q *queries) ReleaseAgentOperationLeases(ctx context.Context, owner string) error {
	if _, err := q.q.ExecContext(ctx, `UPDATE agent_operations SET lease_until = 0 WHERE owner = $1 AND state IN `+activeOps, owner); err != nil {
		return fmt.Errorf("release agent operation leases: %w", err)
	}
	return nil
}

// ClaimAgentOperation is one UPDATE whose WHERE re-checks the lease: on
// PostgreSQL a second claimer waits for the first's row lock and then sees
// the renewed lease_until; SQLite serializes writers.
func (q *queries) ClaimAgentOperation(ctx context.Context, id, owner string, now, leaseUntil int64) error {
	res, err := q.q.ExecContext(ctx, `UPDATE agent_operations SET owner = $2, lease_until = $4
 WHERE id = $1 AND state IN `+activeOps+` AND lease_until < $3`, id, owner, now, leaseUntil)
	if err != nil {
		return fmt.Errorf("claim agent operation: %w", err)
	}
	return affected1(res, "claim agent operation "+id, store.ErrConflict)
}

// ClaimAgentWorkspace takes over an existing claim only if its operation
// is no longer active: ON CONFLICT DO UPDATE locks the conflicting row
// first, so competing claimers are serialized on it.
func (q *queries) ClaimAgentWorkspace(ctx context.Context, workspace, opID string, now int64) error {
	res, err := q.q.ExecContext(ctx, `INSERT INTO agent_workspace_claims (workspace, operation_id, created_at) VALUES ($1, $2, $3)
ON CONFLICT (workspace) DO UPDATE SET operation_id = excluded.operation_id, created_at = excluded.created_at
 WHERE agent_workspace_claims.operation_id = excluded.operation_id OR NOT EXISTS (SELECT 1 FROM agent_operations o
  WHERE o.id = agent_workspace_claims.operation_id AND o.state IN `+activeOps+`)`, workspace, opID, now)
	if err != nil {
		return fmt.Errorf("claim agent workspace: %w", err)
	}
	return affected1(res, "claim agent workspace", store.ErrConflict)
}

func (q *queries) ReleaseAgentWorkspace(ctx context.Context, workspace, opID string) error {
	if _, err := q.q.ExecContext(ctx, `DELETE FROM agent_workspace_claims WHERE workspace = $1 AND operation_id = $2`, workspace, opID); err != nil {
		return fmt.Errorf("release agent workspace: %w", err)
	}
	return nil
}

func (q *queries) StartAgentPackageInstall(ctx context.Context, p store.AgentPackage) error {
	res, err := q.q.ExecContext(ctx, `INSERT INTO agent_packages (`+agentPackageCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)
ON CONFLICT (package_id) DO UPDATE SET source = excluded.source, origin = excluded.origin, dir = excluded.dir, manifest = excluded.manifest,
 version = excluded.version, state = excluded.state, broken = excluded.broken, reviewed_at = excluded.reviewed_at, updated_at = excluded.updated_at
 WHERE agent_packages.state NOT IN ('installing', 'installed', 'broken')
  AND (excluded.source <> 'community' OR (agent_packages.version = excluded.version AND agent_packages.reviewed_at > 0))`,
		p.PackageID, p.Source, p.Origin, p.Dir, string(p.Manifest), p.Version, p.State, p.Broken, p.ReviewedAt, p.UpdatedAt)
	if err != nil {
		return fmt.Errorf("start agent package install %s: %w", p.PackageID, err)
	}
	return affected1(res, "start agent package install "+p.PackageID, store.ErrConflict)
}

func (q *queries) MarkAgentPackageBroken(ctx context.Context, id string, updatedAt int64, why string, now int64) error {
	res, err := q.q.ExecContext(ctx, `UPDATE agent_packages SET state = 'broken', broken = $3, updated_at = $4
 WHERE package_id = $1 AND state = 'installing' AND updated_at = $2`, id, updatedAt, why, now)
	if err != nil {
		return fmt.Errorf("mark agent package broken: %w", err)
	}
	return affected1(res, "mark agent package "+id+" broken", store.ErrConflict)
}

func (q *queries) RevokeAgentIdentity(ctx context.Context, identity string, now int64) error {
	if _, err := q.q.ExecContext(ctx, `INSERT INTO agent_revocations (identity, revoked_at) VALUES ($1, $2) ON CONFLICT DO NOTHING`, identity, now); err != nil {
		return fmt.Errorf("revoke agent identity: %w", err)
	}
	return nil
}

func (q *queries) AgentIdentityRevoked(ctx context.Context, identity string) (bool, error) {
	var n int
	if err := q.q.QueryRowContext(ctx, `SELECT COUNT(*) FROM agent_revocations WHERE identity = $1`, identity).Scan(&n); err != nil {
		return false, fmt.Errorf("read agent revocation: %w", err)
	}
	return n > 0, nil
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

func (q *queries) GetAgentByWorkspace(ctx context.Context, dir string) (store.AgentRecord, error) {
	a, err := scanAgent(q.q.QueryRowContext(ctx, `SELECT `+agentCols+` FROM agents WHERE workspace = $1`, dir))
	if err != nil {
		return a, notFound(err, "get agent by workspace")
	}
	return a, nil
}

// ListAgents is a keyset page: agents_created (created_at, id) serves the
// whole list, agents_package (package_id, created_at) one package's.
func (q *queries) ListAgents(ctx context.Context, p store.ListAgentsParams) ([]store.AgentRecord, error) {
	if p.Limit <= 0 || p.Limit > store.MaxAgentPage {
		p.Limit = store.MaxAgentPage
	}
	where := `(created_at, id) > ($1, $2)`
	args := []any{p.After.CreatedAt, p.After.ID}
	if p.PackageID != "" {
		where += ` AND package_id = $3`
		args = append(args, p.PackageID)
	}
	args = append(args, p.Limit)
	rows, err := q.q.QueryContext(ctx, `SELECT `+agentCols+` FROM agents WHERE `+where+fmt.Sprintf(` ORDER BY created_at, id LIMIT $%d`, len(args)), args...)
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
