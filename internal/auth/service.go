package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/aos-run/aos/internal/store"
)

// Options configure a Service.
type Options struct {
	// PublicOrigin is the origin browsers use to reach the server
	// ("https://aos.example.com"); the WebAuthn RP ID is its host, and
	// cookie-authenticated mutations must come from it. Required.
	PublicOrigin string
	// Key is the 32-byte server key (LoadKey). Required.
	Key []byte
	// IdleTimeout ends a session unused this long (24 h by default).
	IdleTimeout time.Duration
	// AbsoluteTimeout ends a session this long after login, used or not
	// (14 days by default).
	AbsoluteTimeout time.Duration
	// SetupTTL is how long a setup token is valid (24 h by default).
	SetupTTL time.Duration
	// Argon2 are the password hash parameters (DefaultArgon2 when zero).
	// Existing hashes keep their own parameters.
	Argon2 Argon2Params
	// Throttle is the login throttle (DefaultThrottle when zero; zero
	// AccountMax and Begin fields take the defaults).
	Throttle ThrottlePolicy
	// HashSlots bounds concurrent argon2 hashes (2×GOMAXPROCS when zero);
	// HashWait is how long a request waits for a slot before it is refused
	// (250 ms when zero).
	HashSlots int
	HashWait  time.Duration
	// Now is the clock (time.Now by default).
	Now func() time.Time
	// Logger receives failures; never a secret.
	Logger *slog.Logger
}

// Session lifetimes unless Options say otherwise.
const (
	// DefaultIdleTimeout ends a session unused this long.
	DefaultIdleTimeout = 24 * time.Hour
	// DefaultAbsoluteTimeout ends a session this long after login.
	DefaultAbsoluteTimeout = 14 * 24 * time.Hour
)

// Service applies the owner-security rules over a store. It is safe for
// concurrent use.
type Service struct {
	st     store.Store
	opts   Options
	seal   sealer
	origin *url.URL
	wa     *webauthn.WebAuthn // nil when the origin's host is an IP address
	waErr  string
	// slots holds one value per argon2 hash running (hashing).
	slots chan struct{}
}

// New returns a service over st.
func New(st store.Store, opts Options) (*Service, error) {
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.AbsoluteTimeout <= 0 {
		opts.AbsoluteTimeout = DefaultAbsoluteTimeout
	}
	if opts.SetupTTL <= 0 {
		opts.SetupTTL = 24 * time.Hour
	}
	if opts.Argon2 == (Argon2Params{}) {
		opts.Argon2 = DefaultArgon2
	}
	opts.Throttle = opts.Throttle.withDefaults()
	if opts.HashSlots <= 0 {
		opts.HashSlots = defaultHashSlots()
	}
	if opts.HashWait <= 0 {
		opts.HashWait = defaultHashWait
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	u, err := ParseOrigin(opts.PublicOrigin)
	if err != nil {
		return nil, err
	}
	opts.PublicOrigin = u.Scheme + "://" + u.Host
	sl, err := newSealer(opts.Key)
	if err != nil {
		return nil, err
	}
	s := &Service{st: st, opts: opts, seal: sl, origin: u, slots: make(chan struct{}, opts.HashSlots)}
	s.wa, err = webauthn.New(&webauthn.Config{RPID: u.Hostname(), RPDisplayName: "Agent OS", RPOrigins: []string{opts.PublicOrigin}})
	if err != nil {
		s.wa, s.waErr = nil, "passkeys need a public origin whose host is a name, not an IP address: set AOS_PUBLIC_ORIGIN (for example http://localhost:8640)"
	}
	return s, nil
}

// ParseOrigin checks an origin: scheme http or https, a host, nothing else.
func ParseOrigin(origin string) (*url.URL, error) {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return nil, fmt.Errorf("auth: public origin %q must look like https://host[:port]", origin)
	}
	u.Path = ""
	return u, nil
}

// PublicOrigin returns the configured origin, normalised.
func (s *Service) PublicOrigin() string { return s.opts.PublicOrigin }

func (s *Service) now() time.Time { return s.opts.Now() }

// audit records a security event; a failure to record is logged. detail
// must never hold a secret.
func (s *Service) audit(ctx context.Context, actor, action, target string, detail map[string]any) {
	b := []byte("{}")
	if detail != nil {
		if j, err := json.Marshal(detail); err == nil {
			b = j
		}
	}
	_, err := s.st.InsertAudit(context.WithoutCancel(ctx), store.AuditRecord{At: s.now().UnixMilli(), Actor: actor, Action: action, Target: target, Detail: b})
	if err != nil {
		s.opts.Logger.Error("audit record lost", "action", action, "err", err.Error())
	}
}

// randomToken returns prefix + base64url of n random bytes.
func randomToken(prefix string, n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fault("random", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

func hashSecret(secret string) string {
	h := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(h[:])
}
