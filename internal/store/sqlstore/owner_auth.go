package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

// exec1 runs a statement that must affect a row; none is miss.
func (q *queries) exec1(ctx context.Context, doing string, miss error, query string, args ...any) error {
	res, err := q.q.ExecContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", doing, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("%s: %w", doing, miss)
	}
	return nil
}

func (q *queries) GetOwner(ctx context.Context) (store.Owner, error) {
	var o store.Owner
	err := q.q.QueryRowContext(ctx, `SELECT password_hash, totp_secret_enc, totp_last_step, webauthn_user_id, created_at FROM owner_account WHERE id = 1`).
		Scan(&o.PasswordHash, &o.TOTPSecretEnc, &o.TOTPLastStep, &o.WebAuthnUserID, &o.CreatedAt)
	if err != nil {
		return o, notFound(err, "get owner")
	}
	return o, nil
}

func (q *queries) InsertOwner(ctx context.Context, o store.Owner) error {
	return q.exec1(ctx, "insert owner", store.ErrConflict,
		`INSERT INTO owner_account (id, password_hash, totp_secret_enc, totp_last_step, webauthn_user_id, created_at) VALUES (1,$1,$2,$3,$4,$5) ON CONFLICT DO NOTHING`,
		o.PasswordHash, o.TOTPSecretEnc, o.TOTPLastStep, o.WebAuthnUserID, o.CreatedAt)
}

func (q *queries) UseTOTPStep(ctx context.Context, step int64) error {
	return q.exec1(ctx, "use totp step", store.ErrConflict, `UPDATE owner_account SET totp_last_step = $1 WHERE id = 1 AND totp_last_step < $1`, step)
}

func (q *queries) PutSetupToken(ctx context.Context, t store.SetupToken) error {
	_, err := q.q.ExecContext(ctx, `INSERT INTO setup_tokens (id, hash, pending_totp_enc, expires_at, created_at) VALUES (1,$1,$2,$3,$4)
ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, pending_totp_enc = excluded.pending_totp_enc, expires_at = excluded.expires_at, created_at = excluded.created_at`,
		t.Hash, t.PendingTOTPEnc, t.ExpiresAt, t.CreatedAt)
	if err != nil {
		return fmt.Errorf("put setup token: %w", err)
	}
	return nil
}

func (q *queries) GetSetupToken(ctx context.Context) (store.SetupToken, error) {
	var t store.SetupToken
	err := q.q.QueryRowContext(ctx, `SELECT hash, pending_totp_enc, expires_at, created_at FROM setup_tokens WHERE id = 1`).
		Scan(&t.Hash, &t.PendingTOTPEnc, &t.ExpiresAt, &t.CreatedAt)
	if err != nil {
		return t, notFound(err, "get setup token")
	}
	return t, nil
}

func (q *queries) SetSetupPending(ctx context.Context, hash, pending string) error {
	return q.exec1(ctx, "set setup pending", store.ErrNotFound, `UPDATE setup_tokens SET pending_totp_enc = $2 WHERE id = 1 AND hash = $1`, hash, pending)
}

func (q *queries) DeleteSetupToken(ctx context.Context, hash string) error {
	return q.exec1(ctx, "delete setup token", store.ErrNotFound, `DELETE FROM setup_tokens WHERE id = 1 AND hash = $1`, hash)
}

const sessionCols = `public_id, hash, method, created_at, last_seen_at, revoked_at`

func (q *queries) InsertSession(ctx context.Context, s store.Session) error {
	return q.exec1(ctx, "insert session", store.ErrConflict,
		`INSERT INTO owner_sessions (`+sessionCols+`) VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT DO NOTHING`,
		s.PublicID, s.Hash, s.Method, s.CreatedAt, s.LastSeenAt, s.RevokedAt)
}

func (q *queries) GetSessionByHash(ctx context.Context, hash string) (store.Session, error) {
	var s store.Session
	err := q.q.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM owner_sessions WHERE hash = $1`, hash).
		Scan(&s.PublicID, &s.Hash, &s.Method, &s.CreatedAt, &s.LastSeenAt, &s.RevokedAt)
	if err != nil {
		return s, notFound(err, "get session")
	}
	return s, nil
}

func (q *queries) TouchSession(ctx context.Context, publicID string, now int64) error {
	_, err := q.q.ExecContext(ctx, `UPDATE owner_sessions SET last_seen_at = $2 WHERE public_id = $1 AND revoked_at = 0 AND last_seen_at < $2`, publicID, now)
	if err != nil {
		return fmt.Errorf("touch session: %w", err)
	}
	return nil
}

func (q *queries) RevokeSession(ctx context.Context, publicID string, now int64) error {
	return q.exec1(ctx, "revoke session", store.ErrNotFound, `UPDATE owner_sessions SET revoked_at = $2 WHERE public_id = $1 AND revoked_at = 0`, publicID, now)
}

func (q *queries) GetThrottle(ctx context.Context, key string) (store.Throttle, error) {
	t := store.Throttle{Key: key}
	err := q.q.QueryRowContext(ctx, `SELECT failures, last_failure, locked_until FROM auth_throttle WHERE key = $1`, key).
		Scan(&t.Failures, &t.LastFailure, &t.LockedUntil)
	if err != nil {
		return t, notFound(err, "get throttle")
	}
	return t, nil
}

func (q *queries) ReserveThrottle(ctx context.Context, p store.ReserveThrottleParams) (store.Throttle, bool, error) {
	t := store.Throttle{Key: p.Key}
	// n is the attempt's number; the lock it sets is computed from it in
	// the same statement, so no concurrent attempt slips between the count
	// and the lock. A locked key is left alone (the WHERE), and then no
	// row comes back.
	const n = `(CASE WHEN auth_throttle.last_failure < $3 THEN 1 ELSE auth_throttle.failures + 1 END)`
	err := q.q.QueryRowContext(ctx, `INSERT INTO auth_throttle (key, failures, last_failure, locked_until) VALUES ($1, 1, $2, $8)
ON CONFLICT (key) DO UPDATE SET
  failures = `+n+`,
  last_failure = $2,
  locked_until = CASE
    WHEN `+n+` <= $4 THEN 0
    WHEN `+n+` - $4 - 1 >= $7 THEN $2 + $6
    ELSE $2 + (CAST($5 AS BIGINT) << CAST(`+n+` - $4 - 1 AS INTEGER)) END
WHERE auth_throttle.locked_until <= $2
RETURNING failures, last_failure, locked_until`,
		p.Key, p.Now, p.ResetBefore, int64(p.Free), p.Base, p.Max, p.Doublings(), lockAt(p.Now, p.LockFor(1))).
		Scan(&t.Failures, &t.LastFailure, &t.LockedUntil)
	if errors.Is(err, sql.ErrNoRows) {
		t, err = q.GetThrottle(ctx, p.Key)
		if err != nil {
			return t, false, fmt.Errorf("reserve throttle: %w", err)
		}
		return t, false, nil
	}
	if err != nil {
		return t, false, fmt.Errorf("reserve throttle: %w", err)
	}
	return t, true, nil
}

// lockAt is the lock end of a lock of d ms from now; 0 for none.
func lockAt(now, d int64) int64 {
	if d == 0 {
		return 0
	}
	return now + d
}

func (q *queries) ResetThrottle(ctx context.Context, key string) error {
	if _, err := q.q.ExecContext(ctx, `DELETE FROM auth_throttle WHERE key = $1`, key); err != nil {
		return fmt.Errorf("reset throttle: %w", err)
	}
	return nil
}

func (q *queries) InsertWebAuthnCredential(ctx context.Context, c store.WebAuthnCredential) error {
	return q.exec1(ctx, "insert webauthn credential", store.ErrConflict,
		`INSERT INTO webauthn_credentials (id, name, credential, created_at, last_used_at) VALUES ($1,$2,$3,$4,$5) ON CONFLICT DO NOTHING`,
		c.ID, c.Name, c.Credential, c.CreatedAt, c.LastUsedAt)
}

func (q *queries) ListWebAuthnCredentials(ctx context.Context) ([]store.WebAuthnCredential, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT id, name, credential, created_at, last_used_at FROM webauthn_credentials ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list webauthn credentials: %w", err)
	}
	defer rows.Close()
	var out []store.WebAuthnCredential
	for rows.Next() {
		var c store.WebAuthnCredential
		if err := rows.Scan(&c.ID, &c.Name, &c.Credential, &c.CreatedAt, &c.LastUsedAt); err != nil {
			return nil, fmt.Errorf("list webauthn credentials: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

func (q *queries) UpdateWebAuthnCredential(ctx context.Context, id, credential string, now int64) error {
	return q.exec1(ctx, "update webauthn credential", store.ErrNotFound,
		`UPDATE webauthn_credentials SET credential = $2, last_used_at = $3 WHERE id = $1`, id, credential, now)
}

func (q *queries) DeleteWebAuthnCredential(ctx context.Context, id string) error {
	return q.exec1(ctx, "delete webauthn credential", store.ErrNotFound, `DELETE FROM webauthn_credentials WHERE id = $1`, id)
}

func (q *queries) InsertCeremony(ctx context.Context, c store.Ceremony, now int64, maxLive int) error {
	if _, err := q.q.ExecContext(ctx, `DELETE FROM webauthn_ceremonies WHERE expires_at <= $1`, now); err != nil {
		return fmt.Errorf("insert ceremony: sweep: %w", err)
	}
	res, err := q.q.ExecContext(ctx, `INSERT INTO webauthn_ceremonies (challenge, kind, data, expires_at)
SELECT $1, $2, $3, $4 WHERE $5 = 0 OR (SELECT count(*) FROM webauthn_ceremonies WHERE kind = $2) < $5
ON CONFLICT DO NOTHING`, c.Challenge, c.Kind, c.Data, c.ExpiresAt, int64(maxLive))
	if err != nil {
		return fmt.Errorf("insert ceremony: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return nil
	}
	var dup int
	if err := q.q.QueryRowContext(ctx, `SELECT count(*) FROM webauthn_ceremonies WHERE challenge = $1`, c.Challenge).Scan(&dup); err != nil {
		return fmt.Errorf("insert ceremony: %w", err)
	}
	if dup > 0 {
		return fmt.Errorf("insert ceremony: %w", store.ErrConflict)
	}
	return fmt.Errorf("insert ceremony: %w", store.ErrLimit)
}

func (q *queries) TakeCeremony(ctx context.Context, kind, challenge string, now int64) (store.Ceremony, error) {
	c := store.Ceremony{Kind: kind, Challenge: challenge}
	err := q.q.QueryRowContext(ctx, `DELETE FROM webauthn_ceremonies WHERE challenge = $1 AND kind = $2 AND expires_at > $3 RETURNING data, expires_at`,
		challenge, kind, now).Scan(&c.Data, &c.ExpiresAt)
	if err != nil {
		return c, notFound(err, "take ceremony")
	}
	return c, nil
}

func (q *queries) PruneOwnerAuth(ctx context.Context, p store.PruneAuthParams) (int64, error) {
	var total int64
	for _, st := range []struct {
		doing, sql string
		args       []any
	}{
		{"prune sessions", `DELETE FROM owner_sessions WHERE revoked_at <> 0 OR last_seen_at < $1 OR created_at < $2`,
			[]any{p.SessionsSeenBefore, p.SessionsCreatedBefore}},
		{"prune throttle", `DELETE FROM auth_throttle WHERE last_failure < $1 AND locked_until <= $2`, []any{p.ThrottleBefore, p.Now}},
		{"prune ceremonies", `DELETE FROM webauthn_ceremonies WHERE expires_at <= $1`, []any{p.Now}},
	} {
		res, err := q.q.ExecContext(ctx, st.sql, st.args...)
		if err != nil {
			return total, fmt.Errorf("%s: %w", st.doing, err)
		}
		n, _ := res.RowsAffected()
		total += n
	}
	return total, nil
}
