package auth

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// ThrottlePolicy bounds login attempts, per client IP and for the (single)
// owner account. Every attempt is counted before its credential is looked
// at, so concurrent attempts cannot overtake the count. After Free
// attempts of a key, each further attempt locks the key first: an IP for
// Base doubled per attempt beyond IPFree+1, at most Max; the account for
// Base, at most AccountMax. A key's count is forgotten Window after its
// last attempt, or on a successful login. The records live in the
// database, so a restart or another server sharing it does not reset them.
//
// The account key is a short delay, not a growing lockout: anyone can
// spend it, so a long lock would let them lock the owner out, while
// password + TOTP guessing is bounded by the TOTP code already (some 3
// valid codes in 10^6 per attempt). Passkey login does not count on the
// account (an assertion cannot be guessed), only on the IP.
type ThrottlePolicy struct {
	IPFree, AccountFree int
	Base, Max, Window   time.Duration
	// AccountMax caps the account's lock (1 minute when zero).
	AccountMax time.Duration
	// BeginFree is how many passkey login begins an IP makes freely; the
	// next one locks its begins for Base. The count is forgotten
	// BeginWindow after the last begin (20 and 10 minutes when zero).
	BeginFree   int
	BeginWindow time.Duration
}

// DefaultThrottle: 5 free attempts per IP and 10 for the account; then an
// IP locks for 1 minute doubling up to 1 hour, the account for 1 minute;
// counts reset after 24 h. 20 free passkey begins per IP, forgotten after
// 10 quiet minutes.
var DefaultThrottle = ThrottlePolicy{IPFree: 5, AccountFree: 10, Base: time.Minute, Max: time.Hour, Window: 24 * time.Hour,
	AccountMax: time.Minute, BeginFree: 20, BeginWindow: 10 * time.Minute}

// withDefaults fills the zero fields that have a default.
func (p ThrottlePolicy) withDefaults() ThrottlePolicy {
	if p == (ThrottlePolicy{}) {
		return DefaultThrottle
	}
	if p.AccountMax <= 0 {
		p.AccountMax = DefaultThrottle.AccountMax
	}
	if p.BeginFree <= 0 {
		p.BeginFree = DefaultThrottle.BeginFree
	}
	if p.BeginWindow <= 0 {
		p.BeginWindow = DefaultThrottle.BeginWindow
	}
	return p
}

// accountKey is the throttle key of the owner account.
const accountKey = "account:owner"

// ipKey is the throttle key of a client address: an IPv6 address counts by
// its /64, which one client usually holds whole.
func ipKey(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return "ip:" + p.String()
	}
	if !ip.IsValid() {
		return "ip:unknown"
	}
	return "ip:" + ip.String()
}

// beginKey is the throttle key of an IP's passkey login begins: apart
// from ipKey, so opening the login page does not spend password attempts.
func beginKey(ip netip.Addr) string { return "begin:" + ipKey(ip) }

// rule is one key's allowance.
type rule struct {
	key       string
	free      int
	base, max time.Duration
	window    time.Duration
}

func (s *Service) ipRule(ip netip.Addr) rule {
	p := s.opts.Throttle
	return rule{key: ipKey(ip), free: p.IPFree, base: p.Base, max: p.Max, window: p.Window}
}

func (s *Service) accountRule() rule {
	p := s.opts.Throttle
	return rule{key: accountKey, free: p.AccountFree, base: min(p.Base, p.AccountMax), max: p.AccountMax, window: p.Window}
}

func (s *Service) beginRule(ip netip.Addr) rule {
	p := s.opts.Throttle
	return rule{key: beginKey(ip), free: p.BeginFree, base: p.Base, max: p.Base, window: p.BeginWindow}
}

func throttled(wait time.Duration) error {
	return &Error{Code: CodeThrottled, Msg: "too many attempts; try again later", RetryAfter: wait}
}

// reserve counts this attempt on every rule's key before any credential
// is looked at, and refuses (ErrThrottled with RetryAfter) while a key is
// locked. A read-only look first spares the other keys' counts when one
// is locked already (a locked account does not spend the owner's IP
// attempts).
func (s *Service) reserve(ctx context.Context, rules ...rule) error {
	now := s.now()
	var wait int64
	for _, r := range rules {
		t, err := s.st.GetThrottle(ctx, r.key)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return fault("check throttle", err)
		}
		wait = max(wait, t.LockedUntil-now.UnixMilli())
	}
	if wait > 0 {
		return throttled(time.Duration(wait) * time.Millisecond)
	}
	for _, r := range rules {
		t, ok, err := s.st.ReserveThrottle(ctx, store.ReserveThrottleParams{Key: r.key, Now: now.UnixMilli(), ResetBefore: now.Add(-r.window).UnixMilli(),
			Free: r.free, Base: r.base.Milliseconds(), Max: r.max.Milliseconds()})
		if err != nil {
			return fault("reserve throttle", err)
		}
		if !ok {
			return throttled(time.Duration(max(t.LockedUntil-now.UnixMilli(), 1)) * time.Millisecond)
		}
	}
	return nil
}

// succeeded forgets the counts of the IP (logins and passkey begins) and
// the account.
func (s *Service) succeeded(ctx context.Context, ip netip.Addr) {
	s.reset(ctx, ipKey(ip), beginKey(ip), accountKey)
}

// reset forgets the counts of keys; a failure is logged.
func (s *Service) reset(ctx context.Context, keys ...string) {
	for _, k := range keys {
		if err := s.st.ResetThrottle(context.WithoutCancel(ctx), k); err != nil {
			s.opts.Logger.Error("throttle: reset", "err", err.Error())
		}
	}
}
