package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/aos-run/aos/internal/store"
)

// ceremonyTTL bounds a WebAuthn ceremony, begin to finish.
const ceremonyTTL = 5 * time.Minute

// maxCeremonies bounds the live registration ceremonies (each needs a
// fresh owner session; login begin stores nothing).
const maxCeremonies = 64

// maxUsedChallenges bounds the records of used login challenges; only a
// verified passkey login writes one, and they expire with their challenge.
const maxUsedChallenges = 100_000

// ReauthWindow is how recent a session's login must be for it to add a
// passkey: a stolen session cookie must not be able to plant a credential
// that outlives logout.
const ReauthWindow = 15 * time.Minute

// checkName refuses a passkey name that is long or holds a control
// character (which could drive the terminal that lists it).
func checkName(name string) error {
	if len(name) > 100 || !utf8.ValidString(name) || strings.ContainsFunc(name, invisible) {
		return invalid("name must be at most 100 bytes of UTF-8 text without control or format characters")
	}
	return nil
}

// fresh refuses a session whose login is older than ReauthWindow.
func (s *Service) fresh(ses Session) error {
	if ses.CreatedAt.IsZero() || s.now().Sub(ses.CreatedAt) > ReauthWindow {
		return &Error{Code: CodeReauthRequired, Msg: "log in again to add a passkey (the session must be less than 15 minutes old)"}
	}
	return nil
}

// Passkey is a registered WebAuthn credential as presented.
type Passkey struct {
	ID         string `json:"id"`
	Name       string `json:"name,omitempty"`
	CreatedAt  int64  `json:"createdAt"`
	LastUsedAt int64  `json:"lastUsedAt,omitempty"`
}

// owner is the WebAuthn user: the one owner and their passkeys.
type owner struct {
	id    []byte
	creds []webauthn.Credential
}

func (o owner) WebAuthnID() []byte                         { return o.id }
func (o owner) WebAuthnName() string                       { return "owner" }
func (o owner) WebAuthnDisplayName() string                { return "Owner" }
func (o owner) WebAuthnCredentials() []webauthn.Credential { return o.creds }

func (s *Service) webauthn() (*webauthn.WebAuthn, error) {
	if s.wa == nil {
		return nil, &Error{Code: CodeUnavailable, Msg: s.waErr}
	}
	return s.wa, nil
}

// loadOwner reads the owner and their passkeys.
func (s *Service) loadOwner(ctx context.Context) (owner, []store.WebAuthnCredential, error) {
	o, err := s.st.GetOwner(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return owner{}, nil, &Error{Code: CodeSetupRequired, Msg: "setup is not complete"}
	}
	if err != nil {
		return owner{}, nil, fault("read owner", err)
	}
	id, err := base64.RawURLEncoding.DecodeString(o.WebAuthnUserID)
	if err != nil {
		return owner{}, nil, fault("read owner", err)
	}
	rows, err := s.st.ListWebAuthnCredentials(ctx)
	if err != nil {
		return owner{}, nil, fault("list passkeys", err)
	}
	u := owner{id: id}
	for _, r := range rows {
		var c webauthn.Credential
		if err := json.Unmarshal([]byte(r.Credential), &c); err != nil {
			return owner{}, nil, fault("read passkey "+r.ID, err)
		}
		u.creds = append(u.creds, c)
	}
	return u, rows, nil
}

// saveCeremony stores a ceremony's state under its challenge.
func (s *Service) saveCeremony(ctx context.Context, kind string, sd *webauthn.SessionData) error {
	b, err := json.Marshal(sd)
	if err != nil {
		return fault("encode ceremony", err)
	}
	now := s.now()
	err = s.st.InsertCeremony(ctx, store.Ceremony{Challenge: sd.Challenge, Kind: kind, Data: string(b), ExpiresAt: now.Add(ceremonyTTL).UnixMilli()}, now.UnixMilli(), maxCeremonies)
	if errors.Is(err, store.ErrLimit) {
		return &Error{Code: CodeThrottled, Msg: "too many passkey ceremonies in progress; try again later", RetryAfter: time.Minute}
	}
	if err != nil {
		return fault("store ceremony", err)
	}
	return nil
}

// takeCeremony finds (and uses up) the ceremony a response answers.
func (s *Service) takeCeremony(ctx context.Context, kind, challenge string) (webauthn.SessionData, error) {
	var sd webauthn.SessionData
	c, err := s.st.TakeCeremony(ctx, kind, challenge, s.now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return sd, unauthorized("no such " + kind + " ceremony, or it expired; begin again")
	}
	if err != nil {
		return sd, fault("take ceremony", err)
	}
	if err := json.Unmarshal([]byte(c.Data), &sd); err != nil {
		return sd, fault("decode ceremony", err)
	}
	return sd, nil
}

// BeginRegistration starts adding a passkey from session ses, which must
// be fresh (ReauthWindow); it returns the creation options for
// navigator.credentials.create (go-webauthn's JSON). User verification is
// required: a passkey replaces password and TOTP.
func (s *Service) BeginRegistration(ctx context.Context, ses Session) (*protocol.CredentialCreation, error) {
	wa, err := s.webauthn()
	if err != nil {
		return nil, err
	}
	if err := s.fresh(ses); err != nil {
		return nil, err
	}
	u, _, err := s.loadOwner(ctx)
	if err != nil {
		return nil, err
	}
	var excl []protocol.CredentialDescriptor
	for _, c := range u.creds {
		excl = append(excl, c.Descriptor())
	}
	cc, sd, err := wa.BeginRegistration(u, webauthn.WithExclusions(excl),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{UserVerification: protocol.VerificationRequired}),
		webauthn.WithResidentKeyRequirement(protocol.ResidentKeyRequirementPreferred))
	if err != nil {
		return nil, fault("begin registration", err)
	}
	if err := s.saveCeremony(ctx, "register", sd); err != nil {
		return nil, err
	}
	return cc, nil
}

// FinishRegistration verifies the browser's credential (body) against the
// ceremony it answers and stores the passkey under name; ses must be
// fresh (ReauthWindow).
func (s *Service) FinishRegistration(ctx context.Context, ses Session, name string, body []byte) (Passkey, error) {
	wa, err := s.webauthn()
	if err != nil {
		return Passkey{}, err
	}
	if err := s.fresh(ses); err != nil {
		return Passkey{}, err
	}
	if err := checkName(name); err != nil {
		return Passkey{}, err
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(body)
	if err != nil {
		return Passkey{}, invalid("the credential is malformed")
	}
	sd, err := s.takeCeremony(ctx, "register", parsed.Response.CollectedClientData.Challenge)
	if err != nil {
		return Passkey{}, err
	}
	u, _, err := s.loadOwner(ctx)
	if err != nil {
		return Passkey{}, err
	}
	cred, err := wa.CreateCredential(u, sd, parsed)
	if err != nil {
		return Passkey{}, unauthorized("the credential did not verify")
	}
	b, err := json.Marshal(cred)
	if err != nil {
		return Passkey{}, fault("encode passkey", err)
	}
	now := s.now().UnixMilli()
	row := store.WebAuthnCredential{ID: base64.RawURLEncoding.EncodeToString(cred.ID), Name: name, Credential: string(b), CreatedAt: now}
	if err := s.st.InsertWebAuthnCredential(ctx, row); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return Passkey{}, conflict("this passkey is registered already")
		}
		return Passkey{}, fault("store passkey", err)
	}
	s.audit(ctx, ses.Actor(), "passkey.add", row.ID, map[string]any{"name": name})
	return Passkey{ID: row.ID, Name: name, CreatedAt: now}, nil
}

// ListPasskeys returns the registered passkeys, oldest first.
func (s *Service) ListPasskeys(ctx context.Context) ([]Passkey, error) {
	rows, err := s.st.ListWebAuthnCredentials(ctx)
	if err != nil {
		return nil, fault("list passkeys", err)
	}
	out := make([]Passkey, 0, len(rows))
	for _, r := range rows {
		out = append(out, Passkey{ID: r.ID, Name: r.Name, CreatedAt: r.CreatedAt, LastUsedAt: r.LastUsedAt})
	}
	return out, nil
}

// DeletePasskey removes a passkey.
func (s *Service) DeletePasskey(ctx context.Context, ses Session, id string) error {
	if err := s.st.DeleteWebAuthnCredential(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return &Error{Code: CodeNotFound, Msg: "no such passkey"}
		}
		return fault("delete passkey", err)
	}
	s.audit(ctx, ses.Actor(), "passkey.remove", id, nil)
	return nil
}

// BeginPasskeyLogin starts a passkey login; it returns the assertion
// options for navigator.credentials.get. It is anonymous, so it is
// throttled per IP (ThrottlePolicy.BeginFree; past it, ErrThrottled) and
// stores nothing: its challenge is signed and dated (challenge.go).
func (s *Service) BeginPasskeyLogin(ctx context.Context, ip netip.Addr) (*protocol.CredentialAssertion, error) {
	wa, err := s.webauthn()
	if err != nil {
		return nil, err
	}
	if err := s.reserve(ctx, s.beginRule(ip)); err != nil {
		return nil, err
	}
	u, _, err := s.loadOwner(ctx)
	if err != nil {
		return nil, err
	}
	if len(u.creds) == 0 {
		return nil, conflict("no passkey is registered")
	}
	ch, err := s.newLoginChallenge(s.now())
	if err != nil {
		return nil, err
	}
	ca, _, err := wa.BeginLogin(u, webauthn.WithUserVerification(protocol.VerificationRequired), webauthn.WithChallenge(ch))
	if err != nil {
		return nil, fault("begin login", err)
	}
	return ca, nil
}

// FinishPasskeyLogin verifies the browser's assertion (body) and opens a
// session. It is throttled like Login on the IP but not on the account: an
// assertion cannot be guessed, and the account's delay must not keep the
// owner's passkey out. The assertion must carry user verification and a
// sign count above the stored one (unless the authenticator keeps none:
// both 0); a count that did not grow is a cloned or replayed
// authenticator, refused.
func (s *Service) FinishPasskeyLogin(ctx context.Context, ip netip.Addr, body []byte) (NewSession, error) {
	wa, err := s.webauthn()
	if err != nil {
		return NewSession{}, err
	}
	if err := s.reserve(ctx, s.ipRule(ip)); err != nil {
		return NewSession{}, err
	}
	fail := func(msg string) (NewSession, error) {
		s.audit(ctx, "anonymous", "auth.login.failure", "owner", map[string]any{"method": "passkey", "ip": ip.String()})
		return NewSession{}, unauthorized(msg)
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(body)
	if err != nil {
		return fail("the assertion is malformed")
	}
	chText := parsed.Response.CollectedClientData.Challenge
	ch, err := base64.RawURLEncoding.DecodeString(chText)
	if err != nil {
		return fail("no such login ceremony, or it expired; begin again")
	}
	exp, ok := s.checkLoginChallenge(ch, s.now())
	if !ok {
		return fail("no such login ceremony, or it expired; begin again")
	}
	u, _, err := s.loadOwner(ctx)
	if err != nil {
		return NewSession{}, err
	}
	// The session data begin would have stored, rebuilt for the same
	// challenge: the owner's passkeys, user verification required.
	_, sd, err := wa.BeginLogin(u, webauthn.WithUserVerification(protocol.VerificationRequired), webauthn.WithChallenge(ch))
	if err != nil {
		return NewSession{}, fault("rebuild login session", err)
	}
	cred, err := wa.ValidateLogin(u, *sd, parsed)
	if err != nil {
		return fail("the passkey did not verify")
	}
	// go-webauthn only flags a sign count that did not grow (and never
	// when both counts are 0): refuse it, and keep the stored count.
	if cred.Authenticator.CloneWarning {
		s.audit(ctx, "anonymous", "auth.passkey.clone_warning", base64.RawURLEncoding.EncodeToString(cred.ID), map[string]any{"ip": ip.String()})
		return fail("the passkey did not verify")
	}
	// Use once: record the challenge; a second finish with it (a replayed
	// assertion, which authenticators without a sign count cannot be told
	// from) finds it taken.
	now := s.now()
	err = s.st.InsertCeremony(ctx, store.Ceremony{Challenge: chText, Kind: "login-used", Data: "{}", ExpiresAt: exp.UnixMilli()}, now.UnixMilli(), maxUsedChallenges)
	if errors.Is(err, store.ErrConflict) {
		return fail("this login ceremony was used already; begin again")
	}
	if err != nil {
		return NewSession{}, fault("record login challenge", err)
	}
	b, err := json.Marshal(cred)
	if err != nil {
		return NewSession{}, fault("encode passkey", err)
	}
	if err := s.st.UpdateWebAuthnCredential(ctx, base64.RawURLEncoding.EncodeToString(cred.ID), string(b), s.now().UnixMilli()); err != nil {
		return NewSession{}, fault("update passkey", err)
	}
	return s.loggedIn(ctx, ip, "passkey")
}

// Status is what GET /auth/status needs from the service.
type Status struct {
	SetupRequired bool
	Passkeys      int
}

// Status reports whether setup is required and how many passkeys exist.
func (s *Service) Status(ctx context.Context) (Status, error) {
	req, err := s.SetupRequired(ctx)
	if err != nil {
		return Status{}, err
	}
	rows, err := s.st.ListWebAuthnCredentials(ctx)
	if err != nil {
		return Status{}, fault("list passkeys", err)
	}
	return Status{SetupRequired: req, Passkeys: len(rows)}, nil
}

// invisible reports a rune that may not appear in a name shown in a
// terminal: a control character (it could drive the terminal) or a format
// character such as U+202E RIGHT-TO-LEFT OVERRIDE (it could make a name
// read as another).
func invisible(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }
