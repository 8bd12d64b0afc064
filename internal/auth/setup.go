package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"github.com/aos-run/aos/internal/wire"
	"net/netip"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// SetupTokenPrefix starts every setup token.
const SetupTokenPrefix = "aos_setup_"

// purposeTOTP binds a sealed TOTP secret to its use.
const purposeTOTP = "aos totp secret v1"

// SetupRequired reports whether the owner account is still to be created.
func (s *Service) SetupRequired(ctx context.Context) (bool, error) {
	_, err := s.st.GetOwner(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, fault("read owner", err)
	}
	return false, nil
}

// IssueSetupToken makes a fresh setup token, valid for Options.SetupTTL,
// replacing any earlier one; only while setup is incomplete. The token is
// returned once, for the owner's terminal, and stored only as its SHA-256.
func (s *Service) IssueSetupToken(ctx context.Context, actor string) (string, time.Time, error) {
	req, err := s.SetupRequired(ctx)
	if err != nil {
		return "", time.Time{}, err
	}
	if !req {
		return "", time.Time{}, conflict("setup is complete")
	}
	tok, err := randomToken(SetupTokenPrefix, 32)
	if err != nil {
		return "", time.Time{}, err
	}
	now := s.now()
	exp := now.Add(s.opts.SetupTTL)
	if err := s.st.PutSetupToken(ctx, store.SetupToken{Hash: hashSecret(tok), ExpiresAt: exp.UnixMilli(), CreatedAt: now.UnixMilli()}); err != nil {
		return "", time.Time{}, fault("store setup token", err)
	}
	s.audit(ctx, actor, "auth.setup_token.issue", "", map[string]any{"expiresAt": exp.UnixMilli()})
	return tok, exp, nil
}

// SetupSecret is wire.SetupSecret, its JSON form on the API.
type SetupSecret = wire.SetupSecret

// setupToken returns the current setup token if tok is it and unexpired.
func (s *Service) setupToken(ctx context.Context, tok string) (store.SetupToken, error) {
	req, err := s.SetupRequired(ctx)
	if err != nil {
		return store.SetupToken{}, err
	}
	if !req {
		return store.SetupToken{}, conflict("setup is complete")
	}
	t, err := s.st.GetSetupToken(ctx)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return t, fault("read setup token", err)
	}
	bad := unauthorized("the setup token is wrong, expired or used")
	if err != nil {
		return t, bad
	}
	if subtle.ConstantTimeCompare([]byte(hashSecret(tok)), []byte(t.Hash)) != 1 || s.now().UnixMilli() >= t.ExpiresAt {
		return t, bad
	}
	return t, nil
}

// BeginSetup checks the setup token and makes a TOTP secret, kept
// (encrypted) on the setup token until CompleteSetup. Calling it again
// replaces the pending secret.
// Each call is audited (auth.setup.begin, or auth.setup.failure for a
// wrong token), never with the token.
func (s *Service) BeginSetup(ctx context.Context, ip netip.Addr, tok string) (SetupSecret, error) {
	if err := s.reserve(ctx, s.ipRule(ip)); err != nil {
		return SetupSecret{}, err
	}
	t, err := s.setupToken(ctx, tok)
	if errors.Is(err, ErrUnauthorized) {
		s.audit(ctx, "anonymous", "auth.setup.failure", "owner", map[string]any{"step": "begin", "ip": ip.String()})
	}
	if err != nil {
		return SetupSecret{}, err
	}
	// The token is proven: the attempts of its holder's IP are forgotten.
	s.reset(ctx, ipKey(ip))
	secret := make([]byte, 20)
	if _, err := rand.Read(secret); err != nil {
		return SetupSecret{}, fault("make totp secret", err)
	}
	enc, err := s.seal.seal(secret, purposeTOTP)
	if err != nil {
		return SetupSecret{}, err
	}
	if err := s.st.SetSetupPending(ctx, t.Hash, enc); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return SetupSecret{}, unauthorized("the setup token is wrong, expired or used")
		}
		return SetupSecret{}, fault("store pending totp", err)
	}
	s.audit(ctx, "anonymous", "auth.setup.begin", "owner", map[string]any{"ip": ip.String()})
	return SetupSecret{TOTPSecret: b32.EncodeToString(secret), OTPAuthURL: otpauthURL(secret, "owner")}, nil
}

// CompleteSetup creates the owner account from the password and a code of
// the pending TOTP secret, consumes the setup token and opens a session.
func (s *Service) CompleteSetup(ctx context.Context, ip netip.Addr, tok, password, code string) (NewSession, error) {
	if err := s.reserve(ctx, s.ipRule(ip)); err != nil {
		return NewSession{}, err
	}
	t, err := s.setupToken(ctx, tok)
	if errors.Is(err, ErrUnauthorized) {
		s.audit(ctx, "anonymous", "auth.setup.failure", "owner", map[string]any{"step": "complete", "ip": ip.String()})
	}
	if err != nil {
		return NewSession{}, err
	}
	if err := checkPolicy(password); err != nil {
		return NewSession{}, err
	}
	if t.PendingTOTPEnc == "" {
		return NewSession{}, conflict("begin setup first: POST /auth/setup/begin")
	}
	secret, err := s.seal.open(t.PendingTOTPEnc, purposeTOTP)
	if err != nil {
		return NewSession{}, fault("open pending totp", err)
	}
	step, ok := matchTOTP(secret, code, s.now())
	if !ok {
		s.audit(ctx, "anonymous", "auth.setup.failure", "owner", map[string]any{"step": "complete", "reason": "totp", "ip": ip.String()})
		return NewSession{}, unauthorized("the TOTP code is wrong")
	}
	var hash string
	var herr error
	if err := s.hashing(ctx, func() { hash, herr = HashPassword(password, s.opts.Argon2) }); err != nil {
		return NewSession{}, err
	}
	if herr != nil {
		return NewSession{}, herr
	}
	uid := make([]byte, 32)
	if _, err := rand.Read(uid); err != nil {
		return NewSession{}, fault("make user handle", err)
	}
	now := s.now()
	err = s.st.Tx(ctx, func(q store.Queries) error {
		if err := q.DeleteSetupToken(ctx, t.Hash); err != nil {
			return err
		}
		return q.InsertOwner(ctx, store.Owner{PasswordHash: hash, TOTPSecretEnc: t.PendingTOTPEnc, TOTPLastStep: step,
			WebAuthnUserID: base64.RawURLEncoding.EncodeToString(uid), CreatedAt: now.UnixMilli()})
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return NewSession{}, unauthorized("the setup token is wrong, expired or used")
	case errors.Is(err, store.ErrConflict):
		return NewSession{}, conflict("setup is complete")
	case err != nil:
		return NewSession{}, fault("create owner", err)
	}
	s.succeeded(ctx, ip)
	ns, err := s.newSession(ctx, "setup")
	if err != nil {
		return NewSession{}, err
	}
	s.audit(ctx, ns.Actor(), "auth.setup", "owner", map[string]any{"ip": ip.String()})
	return ns, nil
}
