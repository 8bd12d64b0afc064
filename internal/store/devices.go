package store

import "context"

// DeviceQueries are the paired-device queries (internal/device): one-time
// pairing codes and device tokens, both stored only as their SHA-256.
type DeviceQueries interface {
	// InsertDevicePairing stores a pairing code by its hash, deleting the
	// codes expired at p.CreatedAt first; ErrConflict if the hash exists.
	InsertDevicePairing(ctx context.Context, p DevicePairing) error
	// TakeDevicePairing deletes and returns the pairing code with that hash
	// if it has not expired at now, so that it is used once; ErrNotFound
	// otherwise.
	TakeDevicePairing(ctx context.Context, hash string, now int64) (DevicePairing, error)

	// InsertDevice stores a paired device; ErrConflict if its id or token
	// hash exists.
	InsertDevice(ctx context.Context, d Device) error
	// GetDevice returns a device, revoked or not; ErrNotFound if none.
	GetDevice(ctx context.Context, id string) (Device, error)
	// GetDeviceByTokenHash returns the device whose token has that hash,
	// revoked or not; ErrNotFound if there is none.
	GetDeviceByTokenHash(ctx context.Context, hash string) (Device, error)
	// ListDevices returns every device, revoked ones too, oldest first.
	ListDevices(ctx context.Context) ([]Device, error)
	// TouchDevice moves a live device's last_seen_at forward to now.
	TouchDevice(ctx context.Context, id string, now int64) error
	// RevokeDevice marks a live device revoked at now; ErrNotFound if there
	// is no such live device. Nothing is deleted.
	RevokeDevice(ctx context.Context, id string, now int64) error
}

// DevicePairing is a one-time pairing code, by its hash; Name is the name
// the device will carry. Times are Unix ms.
type DevicePairing struct {
	Hash      string
	Name      string
	CreatedAt int64
	ExpiresAt int64
}

// Device is a paired device. Its token is never stored: TokenHash is its
// SHA-256. Times are Unix ms; RevokedAt is 0 while it is live.
type Device struct {
	ID         string
	Name       string
	TokenHash  string
	CreatedAt  int64
	LastSeenAt int64
	RevokedAt  int64
}
