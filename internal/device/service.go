package device

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/store"
)

// Ops is what the channel calls: the agent service (internal/agent), whose
// method set seed 000's operations map onto one to one. identity is
// "device:<deviceID>".
type Ops interface {
	agent.API
}

// TokenPrefix starts every device token, so a leaked one is recognisable
// and never mistaken for an API token (those start with "aos_").
const TokenPrefix = "aosd_"

// tokenLen is TokenPrefix + 32 random bytes, base64url.
var tokenLen = len(TokenPrefix) + base64.RawURLEncoding.EncodedLen(32)

// codeAlphabet is Crockford's base32: no I, L, O or U, so a code read
// aloud or typed is not misread.
const codeAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// codeLen is a pairing code's length in characters (60 bits).
const codeLen = 12

// maxNameLen bounds a device's name, in characters.
const maxNameLen = 64

// Options configure a Service. Zero values take the defaults named.
type Options struct {
	// Ops is the agent service; nil offers no operation (hello advertises
	// none, every operation is UNSUPPORTED_CAPABILITY).
	Ops Ops
	// Now is the clock (time.Now).
	Now func() time.Time
	// PairTTL is how long a pairing code lives (5 minutes).
	PairTTL time.Duration
	// Throttle bounds code exchanges (DefaultThrottle).
	Throttle Throttle
	// Limits bound the WebSocket (DefaultLimits).
	Limits Limits
	// Logger receives failures; never a code, a token or a frame.
	Logger *slog.Logger
}

// Throttle bounds pairing-code exchanges, per client IP and for all
// clients together, in the database (store.ReserveThrottle), so a restart
// or another server does not reset it. Every attempt counts before the
// code is looked at; after Free attempts each further one locks the key
// for Base doubled per attempt, at most Max; counts are forgotten Window
// after the last attempt, an IP's on a successful exchange.
type Throttle struct {
	IPFree, AllFree int
	Base, Max       time.Duration
	AllMax, Window  time.Duration
}

// DefaultThrottle: 5 free attempts per IP, then 1 minute doubling to 1
// hour; 30 free for everyone together, then 10 s doubling to 1 minute;
// forgotten after 1 hour. A code has 60 bits and lives 5 minutes, so the
// throttle bounds noise, not guessing odds, which are nil already.
var DefaultThrottle = Throttle{IPFree: 5, AllFree: 30, Base: time.Minute, Max: time.Hour, AllMax: time.Minute, Window: time.Hour}

// Service pairs devices, authenticates their tokens, serves their
// WebSockets and revokes them. It is safe for concurrent use.
type Service struct {
	st       store.Store
	opts     Options
	instance string // serverInstanceId: random per process

	mu      sync.Mutex
	conns   map[string]map[*conn]struct{} // live sockets by device id; guarded by mu
	buckets map[string]*bucket            // rate limit by device id; guarded by mu
}

// New returns a service over st.
func New(st store.Store, opts Options) *Service {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PairTTL <= 0 {
		opts.PairTTL = 5 * time.Minute
	}
	if opts.Throttle == (Throttle{}) {
		opts.Throttle = DefaultThrottle
	}
	opts.Limits = opts.Limits.withDefaults()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{st: st, opts: opts, instance: randomHex(16), conns: map[string]map[*conn]struct{}{}, buckets: map[string]*bucket{}}
}

// Device is a paired device as the owner sees it: never its token.
type Device struct {
	ID         string `json:"id"`
	Name       string `json:"name"`
	CreatedAt  int64  `json:"createdAt"`
	LastSeenAt int64  `json:"lastSeenAt,omitempty"`
	RevokedAt  int64  `json:"revokedAt,omitempty"`
	// Connected is how many WebSockets the device has open on this server.
	Connected int `json:"connected"`
}

// Pairing is a one-time pairing code just created: Code is shown this once
// and stored only as its SHA-256. URL is aos://pair?server=…&code=….
type Pairing struct {
	Code      string `json:"code"`
	URL       string `json:"url"`
	Name      string `json:"name"`
	ExpiresAt int64  `json:"expiresAt"`
}

// Paired is what a device receives for its code: Token is shown this once
// and stored only as its SHA-256.
type Paired struct {
	DeviceID  string `json:"deviceId"`
	Token     string `json:"token"`
	MachineID string `json:"machineId"`
}

// Identity is the agent service's identity of a device.
func Identity(deviceID string) string { return "device:" + deviceID }

// Pair creates a one-time code for a device to be called name; server is
// the public origin the device should connect to (put in the URL). actor
// names the owner in the audit log.
func (s *Service) Pair(ctx context.Context, actor, name, server string) (Pairing, error) {
	if err := checkName(name); err != nil {
		return Pairing{}, err
	}
	code := newCode()
	now := s.opts.Now()
	exp := now.Add(s.opts.PairTTL).UnixMilli()
	if err := s.st.InsertDevicePairing(ctx, store.DevicePairing{Hash: hashSecret(code), Name: name, CreatedAt: now.UnixMilli(), ExpiresAt: exp}); err != nil {
		return Pairing{}, fmt.Errorf("device: create pairing code: %w", err)
	}
	s.audit(ctx, actor, "device.pair", "", map[string]any{"name": name, "expiresAt": exp})
	shown := code[:4] + "-" + code[4:8] + "-" + code[8:]
	q := url.Values{"code": {shown}}
	if server != "" {
		q.Set("server", server)
	}
	return Pairing{Code: shown, URL: "aos://pair?" + q.Encode(), Name: name, ExpiresAt: exp}, nil
}

// Exchange trades a pairing code for a device token, once: the code is
// consumed whether or not the caller keeps the answer. ip is the client's
// address, for the throttle.
func (s *Service) Exchange(ctx context.Context, ip netip.Addr, code string) (Paired, error) {
	now := s.opts.Now()
	if err := s.throttle(ctx, ip, now); err != nil {
		return Paired{}, err
	}
	norm, ok := normalizeCode(code)
	if !ok {
		return Paired{}, ErrUnauthorized
	}
	p, err := s.st.TakeDevicePairing(ctx, hashSecret(norm), now.UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return Paired{}, ErrUnauthorized
	}
	if err != nil {
		return Paired{}, fmt.Errorf("device: take pairing code: %w", err)
	}
	tok := TokenPrefix + base64.RawURLEncoding.EncodeToString(randomBytes(32))
	d := store.Device{ID: "dev_" + randomHex(8), Name: p.Name, TokenHash: hashSecret(tok), CreatedAt: now.UnixMilli()}
	if err := s.st.InsertDevice(ctx, d); err != nil {
		return Paired{}, fmt.Errorf("device: insert device: %w", err)
	}
	if err := s.st.ResetThrottle(context.WithoutCancel(ctx), ipKey(ip)); err != nil {
		s.opts.Logger.Error("device: reset throttle", "err", err.Error())
	}
	s.audit(ctx, Identity(d.ID), "device.paired", d.ID, map[string]any{"name": d.Name})
	out := Paired{DeviceID: d.ID, Token: tok}
	if s.opts.Ops != nil {
		out.MachineID = s.opts.Ops.MachineID()
	}
	return out, nil
}

func ipKey(ip netip.Addr) string { return "device-pair:ip:" + ip.Unmap().String() }

const allKey = "device-pair:all"

// throttle counts one exchange attempt for ip and for everyone.
func (s *Service) throttle(ctx context.Context, ip netip.Addr, now time.Time) error {
	t := s.opts.Throttle
	for _, r := range []struct {
		key       string
		free      int
		base, max time.Duration
	}{{ipKey(ip), t.IPFree, t.Base, t.Max}, {allKey, t.AllFree, min(t.Base, t.AllMax), t.AllMax}} {
		rec, ok, err := s.st.ReserveThrottle(ctx, store.ReserveThrottleParams{Key: r.key, Now: now.UnixMilli(), ResetBefore: now.Add(-t.Window).UnixMilli(),
			Free: r.free, Base: r.base.Milliseconds(), Max: r.max.Milliseconds()})
		if err != nil {
			return fmt.Errorf("device: reserve throttle: %w", err)
		}
		if !ok {
			return &Error{Code: CodeThrottled, Msg: "too many pairing attempts; try again later",
				RetryAfter: time.Duration(max(rec.LockedUntil-now.UnixMilli(), 1)) * time.Millisecond}
		}
	}
	return nil
}

// Authenticate returns the live device whose token this is;
// ErrUnauthorized for anything else, with no hint why.
func (s *Service) Authenticate(ctx context.Context, token string) (store.Device, error) {
	if len(token) != tokenLen || !strings.HasPrefix(token, TokenPrefix) {
		return store.Device{}, ErrUnauthorized
	}
	d, err := s.st.GetDeviceByTokenHash(ctx, hashSecret(token))
	if errors.Is(err, store.ErrNotFound) || err == nil && d.RevokedAt != 0 {
		return store.Device{}, ErrUnauthorized
	}
	if err != nil {
		return store.Device{}, fmt.Errorf("device: authenticate: %w", err)
	}
	return d, nil
}

// List returns every device, revoked ones too, oldest first.
func (s *Service) List(ctx context.Context) ([]Device, error) {
	ds, err := s.st.ListDevices(ctx)
	if err != nil {
		return nil, fmt.Errorf("device: list: %w", err)
	}
	out := make([]Device, 0, len(ds))
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range ds {
		out = append(out, Device{ID: d.ID, Name: d.Name, CreatedAt: d.CreatedAt, LastSeenAt: d.LastSeenAt, RevokedAt: d.RevokedAt, Connected: len(s.conns[d.ID])})
	}
	return out, nil
}

// Revoke ends a device's pairing: the agent service records the
// revocation durably first (Ops.Revoke), so that its preparations and
// turns stop at the next step boundary on every server, even if the rest
// is cut short; then its token is refused from now on and its open
// sockets on this server close at once (other servers' within their
// recheck interval). Nothing is deleted.
func (s *Service) Revoke(ctx context.Context, actor, id string) error {
	d, err := s.st.GetDevice(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && d.RevokedAt != 0 {
		return &Error{Code: CodeNotFound, Msg: "no live device " + id}
	}
	if err != nil {
		return fmt.Errorf("device: revoke %s: %w", id, err)
	}
	if s.opts.Ops != nil {
		if err := s.opts.Ops.Revoke(context.WithoutCancel(ctx), Identity(id)); err != nil {
			return fmt.Errorf("device: revoke %s in the agent service: %w", id, err)
		}
	}
	err = s.st.RevokeDevice(ctx, id, s.opts.Now().UnixMilli())
	if errors.Is(err, store.ErrNotFound) {
		return &Error{Code: CodeNotFound, Msg: "no live device " + id}
	}
	if err != nil {
		return fmt.Errorf("device: revoke %s: %w", id, err)
	}
	s.closeDevice(id)
	s.audit(ctx, actor, "device.revoke", id, map[string]any{})
	return nil
}

// closeDevice closes every open socket of a device on this server.
func (s *Service) closeDevice(id string) {
	s.mu.Lock()
	cs := make([]*conn, 0, len(s.conns[id]))
	for c := range s.conns[id] {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	for _, c := range cs {
		c.revoke()
	}
}

// audit records a mutation; a failure is logged, not returned (the
// mutation happened).
func (s *Service) audit(ctx context.Context, actor, action, target string, detail map[string]any) {
	b, _ := json.Marshal(detail)
	if _, err := s.st.InsertAudit(context.WithoutCancel(ctx), store.AuditRecord{At: s.opts.Now().UnixMilli(), Actor: actor, Action: action, Target: target, Detail: b}); err != nil {
		s.opts.Logger.Error("device: audit", "action", action, "err", err.Error())
	}
}

// checkName accepts 1–64 printable characters.
func checkName(name string) error {
	if name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > maxNameLen {
		return &Error{Code: CodeInvalidInput, Msg: fmt.Sprintf("a device name is 1 to %d characters", maxNameLen)}
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return &Error{Code: CodeInvalidInput, Msg: "a device name may not hold control or format characters"}
		}
	}
	return nil
}

// newCode returns codeLen random characters of codeAlphabet.
func newCode() string {
	b := randomBytes(codeLen)
	out := make([]byte, codeLen)
	for i, v := range b {
		out[i] = codeAlphabet[v&31] // 256 is a multiple of 32: no bias
	}
	return string(out)
}

// normalizeCode reads a code as typed: case, dashes and spaces do not
// matter, and O, I and L read as 0, 1 and 1.
func normalizeCode(code string) (string, bool) {
	if len(code) > 64 {
		return "", false
	}
	var b strings.Builder
	for _, r := range strings.ToUpper(code) {
		switch r {
		case '-', ' ':
			continue
		case 'O':
			r = '0'
		case 'I', 'L':
			r = '1'
		}
		if r > unicode.MaxASCII || !strings.ContainsRune(codeAlphabet, r) {
			return "", false
		}
		b.WriteRune(r)
	}
	return b.String(), b.Len() == codeLen
}

func hashSecret(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return b
}

func randomHex(n int) string { return hex.EncodeToString(randomBytes(n)) }
