package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/netip"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// Session is a live owner session, never its id.
type Session struct {
	PublicID  string
	Method    string // password, passkey, setup
	CreatedAt time.Time
	// ExpiresAt is when the session ends if unused (idle expiry, capped by
	// the absolute one).
	ExpiresAt time.Time
	// EndsAt is the absolute expiry, used or not.
	EndsAt time.Time
}

// Actor names the session in the audit log: "session:<public id>".
func (s Session) Actor() string { return "session:" + s.PublicID }

// NewSession is a session just opened. Secret is the cookie value, shown
// this once and stored only as its SHA-256.
type NewSession struct {
	Session
	Secret    string
	CSRFToken string
}

// sessionIDLen is the length of a session id: 32 random bytes, base64url.
var sessionIDLen = base64.RawURLEncoding.EncodedLen(32)

// touchEvery bounds last-seen writes to one per minute per session.
const touchEvery = time.Minute

func (s *Service) newSession(ctx context.Context, method string) (NewSession, error) {
	secret, err := randomToken("", 32)
	if err != nil {
		return NewSession{}, err
	}
	pub, err := randomToken("", 9)
	if err != nil {
		return NewSession{}, err
	}
	now := s.now()
	if err := s.st.InsertSession(ctx, store.Session{PublicID: pub, Hash: hashSecret(secret), Method: method, CreatedAt: now.UnixMilli(), LastSeenAt: now.UnixMilli()}); err != nil {
		return NewSession{}, fault("store session", err)
	}
	ses := Session{PublicID: pub, Method: method, CreatedAt: now, ExpiresAt: s.expiry(now, now), EndsAt: now.Add(s.opts.AbsoluteTimeout)}
	return NewSession{Session: ses, Secret: secret, CSRFToken: CSRFToken(secret)}, nil
}

func (s *Service) expiry(created, lastSeen time.Time) time.Time {
	idle, abs := lastSeen.Add(s.opts.IdleTimeout), created.Add(s.opts.AbsoluteTimeout)
	if abs.Before(idle) {
		return abs
	}
	return idle
}

// CSRFToken is the session's CSRF token: HMAC-SHA-256 keyed by the session
// id, so it needs no storage, and the stored hash does not yield it.
func CSRFToken(sessionID string) string {
	m := hmac.New(sha256.New, []byte(sessionID))
	m.Write([]byte("aos csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckCSRF reports whether token is sessionID's CSRF token (constant time).
func CheckCSRF(sessionID, token string) bool {
	return token != "" && hmac.Equal([]byte(CSRFToken(sessionID)), []byte(token))
}

// Authenticate returns the live session with that id, moving its idle
// expiry on. Anything else (malformed, unknown, revoked, expired) is
// ErrUnauthorized, with no hint why.
func (s *Service) Authenticate(ctx context.Context, secret string) (Session, error) {
	return s.session(ctx, secret, true)
}

// Check is Authenticate without moving the idle expiry: an open events
// socket re-checks its session with it, so a forgotten console tab does
// not keep the session alive.
func (s *Service) Check(ctx context.Context, secret string) (Session, error) {
	return s.session(ctx, secret, false)
}

func (s *Service) session(ctx context.Context, secret string, touch bool) (Session, error) {
	if len(secret) != sessionIDLen {
		return Session{}, ErrUnauthorized
	}
	row, err := s.st.GetSessionByHash(ctx, hashSecret(secret))
	if errors.Is(err, store.ErrNotFound) {
		return Session{}, ErrUnauthorized
	}
	if err != nil {
		return Session{}, fault("read session", err)
	}
	now := s.now()
	created, seen := time.UnixMilli(row.CreatedAt), time.UnixMilli(row.LastSeenAt)
	if row.RevokedAt != 0 || !now.Before(s.expiry(created, seen)) {
		return Session{}, ErrUnauthorized
	}
	if touch && now.Sub(seen) >= touchEvery {
		if err := s.st.TouchSession(ctx, row.PublicID, now.UnixMilli()); err != nil {
			return Session{}, fault("touch session", err)
		}
		seen = now
	}
	return Session{PublicID: row.PublicID, Method: row.Method, CreatedAt: created, ExpiresAt: s.expiry(created, seen), EndsAt: created.Add(s.opts.AbsoluteTimeout)}, nil
}

// Login checks the password and a TOTP code and opens a session. The
// attempt is counted on the IP and the account first; while either is
// locked it answers ErrThrottled without looking at the credentials. A
// wrong password or code is ErrUnauthorized, saying not which.
func (s *Service) Login(ctx context.Context, ip netip.Addr, password, code string) (NewSession, error) {
	if err := s.reserve(ctx, s.ipRule(ip), s.accountRule()); err != nil {
		return NewSession{}, err
	}
	o, err := s.st.GetOwner(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return NewSession{}, &Error{Code: CodeSetupRequired, Msg: "setup is not complete"}
	}
	if err != nil {
		return NewSession{}, fault("read owner", err)
	}
	ok := len(password) <= MaxPasswordBytes
	if ok {
		var verr error
		if err := s.hashing(ctx, func() { ok, verr = VerifyPassword(password, o.PasswordHash) }); err != nil {
			return NewSession{}, err
		}
		if verr != nil {
			return NewSession{}, fault("verify password", verr)
		}
	}
	var step int64
	if ok {
		secret, err := s.seal.open(o.TOTPSecretEnc, purposeTOTP)
		if err != nil {
			return NewSession{}, fault("open totp secret", err)
		}
		step, ok = matchTOTP(secret, code, s.now())
	}
	if ok {
		// A code is good once: the step must be later than the last used.
		if err := s.st.UseTOTPStep(ctx, step); errors.Is(err, store.ErrConflict) {
			ok = false
		} else if err != nil {
			return NewSession{}, fault("use totp step", err)
		}
	}
	if !ok {
		s.audit(ctx, "anonymous", "auth.login.failure", "owner", map[string]any{"method": "password", "ip": ip.String()})
		return NewSession{}, unauthorized("wrong password or code")
	}
	return s.loggedIn(ctx, ip, "password")
}

func (s *Service) loggedIn(ctx context.Context, ip netip.Addr, method string) (NewSession, error) {
	s.succeeded(ctx, ip)
	ns, err := s.newSession(ctx, method)
	if err != nil {
		return NewSession{}, err
	}
	s.audit(ctx, ns.Actor(), "auth.login", "owner", map[string]any{"method": method, "ip": ip.String()})
	return ns, nil
}

// Logout revokes the session.
func (s *Service) Logout(ctx context.Context, ses Session) error {
	if err := s.st.RevokeSession(ctx, ses.PublicID, s.now().UnixMilli()); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return ErrUnauthorized
		}
		return fault("revoke session", err)
	}
	s.audit(ctx, ses.Actor(), "auth.logout", ses.Actor(), nil)
	return nil
}

// Prune deletes sessions that can no longer authenticate (revoked, idle or
// past their absolute expiry), throttle records whose window has passed
// and whose lockout has ended, and expired passkey ceremonies, so an
// attacker cycling addresses cannot grow the tables without bound. It
// returns how many records went. `aos server` runs it periodically.
func (s *Service) Prune(ctx context.Context) (int64, error) {
	now := s.now()
	n, err := s.st.PruneOwnerAuth(ctx, store.PruneAuthParams{
		Now:                   now.UnixMilli(),
		SessionsSeenBefore:    now.Add(-s.opts.IdleTimeout).UnixMilli(),
		SessionsCreatedBefore: now.Add(-s.opts.AbsoluteTimeout).UnixMilli(),
		ThrottleBefore:        now.Add(-s.opts.Throttle.Window).UnixMilli(),
	})
	if err != nil {
		return n, fault("prune", err)
	}
	return n, nil
}
