package store

import "context"

// OwnerAuthQueries are the owner-security queries (internal/auth): the one
// owner account, its setup token, sessions, login throttling and WebAuthn
// passkeys. No secret is stored in the clear: the setup token and session
// ids by SHA-256, the TOTP secret encrypted by the caller.
type OwnerAuthQueries interface {
	// GetOwner returns the owner account; ErrNotFound before setup.
	GetOwner(ctx context.Context) (Owner, error)
	// InsertOwner creates the owner account; ErrConflict if it exists.
	InsertOwner(ctx context.Context, o Owner) error
	// UseTOTPStep records step as the last TOTP time step used, only if it
	// is later than the one recorded; ErrConflict otherwise (a replay).
	UseTOTPStep(ctx context.Context, step int64) error

	// PutSetupToken stores the one setup token, replacing any earlier one
	// (and its pending TOTP secret).
	PutSetupToken(ctx context.Context, t SetupToken) error
	// GetSetupToken returns the setup token; ErrNotFound if there is none.
	GetSetupToken(ctx context.Context) (SetupToken, error)
	// SetSetupPending stores the pending (encrypted) TOTP secret on the
	// setup token with that hash; ErrNotFound if it is not the current one.
	SetSetupPending(ctx context.Context, hash, pendingTOTPEnc string) error
	// DeleteSetupToken consumes the setup token with that hash; ErrNotFound
	// if it is not the current one.
	DeleteSetupToken(ctx context.Context, hash string) error

	// InsertSession stores a session; ErrConflict if its id or hash exists.
	InsertSession(ctx context.Context, s Session) error
	// GetSessionByHash returns the session with that hash, revoked or not;
	// ErrNotFound if there is none.
	GetSessionByHash(ctx context.Context, hash string) (Session, error)
	// TouchSession moves a live session's last_seen_at forward to now.
	TouchSession(ctx context.Context, publicID string, now int64) error
	// RevokeSession revokes a live session; ErrNotFound if there is none.
	RevokeSession(ctx context.Context, publicID string, now int64) error

	// GetThrottle returns the throttle record of key; ErrNotFound if none.
	GetThrottle(ctx context.Context, key string) (Throttle, error)
	// ReserveThrottle counts one attempt for key before its credential is
	// checked, atomically (several servers and many concurrent requests may
	// share the row). While key is locked at p.Now it changes nothing and
	// returns ok false with the record, so the caller refuses without
	// looking at the credential. Otherwise it counts the attempt (a count
	// whose last attempt is older than p.ResetBefore starts again at 1)
	// and, in the same statement, locks key once the count passes p.Free
	// (p.LockFor), so that concurrent attempts past the allowance see the
	// lock.
	ReserveThrottle(ctx context.Context, p ReserveThrottleParams) (t Throttle, ok bool, err error)
	// ResetThrottle forgets key's failures.
	ResetThrottle(ctx context.Context, key string) error

	// InsertWebAuthnCredential stores a passkey; ErrConflict if its id exists.
	InsertWebAuthnCredential(ctx context.Context, c WebAuthnCredential) error
	// ListWebAuthnCredentials returns every passkey, oldest first.
	ListWebAuthnCredentials(ctx context.Context) ([]WebAuthnCredential, error)
	// UpdateWebAuthnCredential replaces a passkey's credential data (its
	// sign count moves) and last use; ErrNotFound if there is none.
	UpdateWebAuthnCredential(ctx context.Context, id, credential string, now int64) error
	// DeleteWebAuthnCredential removes a passkey; ErrNotFound if none.
	DeleteWebAuthnCredential(ctx context.Context, id string) error

	// InsertCeremony stores a WebAuthn ceremony's state, deleting those
	// expired at now first; ErrConflict if the challenge exists, ErrLimit
	// if maxLive ceremonies of its kind are live already (0: no bound).
	// Concurrent inserts on PostgreSQL may pass maxLive by at most their
	// number.
	InsertCeremony(ctx context.Context, c Ceremony, now int64, maxLive int) error
	// TakeCeremony deletes and returns the unexpired ceremony of that kind
	// and challenge, so it is used once; ErrNotFound if there is none.
	TakeCeremony(ctx context.Context, kind, challenge string, now int64) (Ceremony, error)

	// PruneOwnerAuth deletes what can no longer authenticate or lock
	// anyone out: revoked sessions and those idle or alive past the
	// bounds, throttle records whose window passed and whose lockout
	// ended, and expired ceremonies. It returns how many rows went.
	PruneOwnerAuth(ctx context.Context, p PruneAuthParams) (int64, error)
}

// ReserveThrottleParams shape ReserveThrottle; times are Unix ms.
type ReserveThrottleParams struct {
	Key              string
	Now, ResetBefore int64
	// Free is how many attempts count without a lock.
	Free int
	// Base and Max bound the lock: attempt Free+k locks key until
	// Now + Base·2^(k-1), at most Now + Max.
	Base, Max int64
}

// LockFor is how long (ms) attempt number n locks its key: 0 while n is
// within Free, then Base doubled per attempt beyond Free+1, at most Max.
func (p ReserveThrottleParams) LockFor(n int64) int64 {
	over := n - int64(p.Free)
	if over <= 0 {
		return 0
	}
	d := p.Base
	for i := int64(1); i < over && d < p.Max; i++ {
		d *= 2
	}
	return min(d, p.Max)
}

// Doublings is how many doublings of Base reach Max (at most 62): the
// lock of attempt Free+k is Max once k-1 reaches it.
func (p ReserveThrottleParams) Doublings() int64 {
	var k int64
	for d := p.Base; d > 0 && d < p.Max && k < 62; d *= 2 {
		k++
	}
	return k
}

// PruneAuthParams bound PruneOwnerAuth; times are Unix ms.
type PruneAuthParams struct {
	Now                   int64
	SessionsSeenBefore    int64 // idle expiry passed
	SessionsCreatedBefore int64 // absolute expiry passed
	ThrottleBefore        int64 // last failure older than the window
}

// Owner is the single owner account.
type Owner struct {
	PasswordHash   string // argon2id, PHC string
	TOTPSecretEnc  string // AES-GCM under the server key, base64
	TOTPLastStep   int64
	WebAuthnUserID string // base64url of 32 random bytes
	CreatedAt      int64
}

// SetupToken is the first-run setup token, by hash.
type SetupToken struct {
	Hash           string
	PendingTOTPEnc string // set by setup begin
	ExpiresAt      int64
	CreatedAt      int64
}

// Session is an owner's browser session. The session id is never stored:
// Hash is its SHA-256; PublicID names it in the audit log.
type Session struct {
	PublicID   string
	Hash       string
	Method     string // password, passkey, setup
	CreatedAt  int64
	LastSeenAt int64
	RevokedAt  int64
}

// Throttle counts the login attempts of one key (an IP, the account, a
// passkey begin) since its last success; Failures and LastFailure name
// attempts counted before the credential was checked.
type Throttle struct {
	Key         string
	Failures    int
	LastFailure int64
	LockedUntil int64
}

// WebAuthnCredential is a passkey: Credential is go-webauthn's credential
// as JSON (public key, sign count, flags), never a secret.
type WebAuthnCredential struct {
	ID         string // base64url of the credential id
	Name       string
	Credential string
	CreatedAt  int64
	LastUsedAt int64
}

// Ceremony is a WebAuthn ceremony's server state, found by its challenge.
type Ceremony struct {
	Challenge string
	Kind      string // register, login
	Data      string // go-webauthn SessionData, JSON
	ExpiresAt int64
}
