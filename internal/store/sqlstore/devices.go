package sqlstore

import (
	"context"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

func (q *queries) InsertDevicePairing(ctx context.Context, p store.DevicePairing) error {
	if _, err := q.q.ExecContext(ctx, `DELETE FROM device_pairings WHERE expires_at <= $1`, p.CreatedAt); err != nil {
		return fmt.Errorf("prune device pairings: %w", err)
	}
	res, err := q.q.ExecContext(ctx, `INSERT INTO device_pairings (hash, name, created_at, expires_at) VALUES ($1,$2,$3,$4) ON CONFLICT DO NOTHING`,
		p.Hash, p.Name, p.CreatedAt, p.ExpiresAt)
	if err != nil {
		return fmt.Errorf("insert device pairing: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("insert device pairing: %w", store.ErrConflict)
	}
	return nil
}

func (q *queries) TakeDevicePairing(ctx context.Context, hash string, now int64) (store.DevicePairing, error) {
	p := store.DevicePairing{Hash: hash}
	err := q.q.QueryRowContext(ctx, `DELETE FROM device_pairings WHERE hash = $1 AND expires_at > $2 RETURNING name, created_at, expires_at`,
		hash, now).Scan(&p.Name, &p.CreatedAt, &p.ExpiresAt)
	if err != nil {
		return p, notFound(err, "take device pairing")
	}
	return p, nil
}

const deviceCols = `id, name, token_hash, created_at, last_seen_at, revoked_at`

func scanDevice(sc interface{ Scan(...any) error }) (store.Device, error) {
	var d store.Device
	err := sc.Scan(&d.ID, &d.Name, &d.TokenHash, &d.CreatedAt, &d.LastSeenAt, &d.RevokedAt)
	return d, err
}

func (q *queries) InsertDevice(ctx context.Context, d store.Device) error {
	res, err := q.q.ExecContext(ctx, `INSERT INTO devices (`+deviceCols+`) VALUES ($1,$2,$3,$4,$5,$6) ON CONFLICT DO NOTHING`,
		d.ID, d.Name, d.TokenHash, d.CreatedAt, d.LastSeenAt, d.RevokedAt)
	if err != nil {
		return fmt.Errorf("insert device: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("insert device %s: %w", d.ID, store.ErrConflict)
	}
	return nil
}

func (q *queries) GetDevice(ctx context.Context, id string) (store.Device, error) {
	d, err := scanDevice(q.q.QueryRowContext(ctx, `SELECT `+deviceCols+` FROM devices WHERE id = $1`, id))
	if err != nil {
		return d, notFound(err, "get device")
	}
	return d, nil
}

func (q *queries) GetDeviceByTokenHash(ctx context.Context, hash string) (store.Device, error) {
	d, err := scanDevice(q.q.QueryRowContext(ctx, `SELECT `+deviceCols+` FROM devices WHERE token_hash = $1`, hash))
	if err != nil {
		return d, notFound(err, "get device by token")
	}
	return d, nil
}

func (q *queries) ListDevices(ctx context.Context) ([]store.Device, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+deviceCols+` FROM devices ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("list devices: %w", err)
	}
	defer rows.Close()
	var out []store.Device
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, fmt.Errorf("list devices: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func (q *queries) TouchDevice(ctx context.Context, id string, now int64) error {
	if _, err := q.q.ExecContext(ctx, `UPDATE devices SET last_seen_at = $2 WHERE id = $1 AND revoked_at = 0 AND last_seen_at < $2`, id, now); err != nil {
		return fmt.Errorf("touch device: %w", err)
	}
	return nil
}

func (q *queries) RevokeDevice(ctx context.Context, id string, now int64) error {
	res, err := q.q.ExecContext(ctx, `UPDATE devices SET revoked_at = $2 WHERE id = $1 AND revoked_at = 0`, id, now)
	if err != nil {
		return fmt.Errorf("revoke device: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("revoke device %s: %w", id, store.ErrNotFound)
	}
	return nil
}
