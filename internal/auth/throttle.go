package auth

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// ThrottlePolicy bounds failed login attempts, per client IP and for the
// (single) owner account. After Free failures of a key, each further
// failure locks the key for Base doubled per failure beyond Free, at most
// Max. A key's count is forgotten Window after its last failure, or on a
// successful login. The records live in the database, so a restart or
// another server sharing it does not reset them.
type ThrottlePolicy struct {
	IPFree, AccountFree int
	Base, Max, Window   time.Duration
}

// DefaultThrottle: 5 free failures per IP and 10 for the account, then a
// lockout of 1 minute doubling up to 1 hour; counts reset after 24 h.
var DefaultThrottle = ThrottlePolicy{IPFree: 5, AccountFree: 10, Base: time.Minute, Max: time.Hour, Window: 24 * time.Hour}

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

// checkThrottle refuses while the IP or the account is locked out,
// before any credential is looked at.
func (s *Service) checkThrottle(ctx context.Context, ip netip.Addr, withAccount bool) error {
	keys := []string{ipKey(ip)}
	if withAccount {
		keys = append(keys, accountKey)
	}
	now := s.now().UnixMilli()
	var wait int64
	for _, k := range keys {
		t, err := s.st.GetThrottle(ctx, k)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return fault("check throttle", err)
		}
		wait = max(wait, t.LockedUntil-now)
	}
	if wait > 0 {
		ra := time.Duration(wait) * time.Millisecond
		return &Error{Code: CodeThrottled, Msg: "too many failed attempts; try again later", RetryAfter: ra}
	}
	return nil
}

// failed counts a failure on the IP and, for a login, on the account, and
// locks a key that is past its free attempts.
func (s *Service) failed(ctx context.Context, ip netip.Addr, withAccount bool) {
	p := s.opts.Throttle
	now := s.now()
	type kf struct {
		key  string
		free int
	}
	keys := []kf{{ipKey(ip), p.IPFree}}
	if withAccount {
		keys = append(keys, kf{accountKey, p.AccountFree})
	}
	ctx = context.WithoutCancel(ctx)
	for _, k := range keys {
		t, err := s.st.AddThrottleFailure(ctx, k.key, now.UnixMilli(), now.Add(-p.Window).UnixMilli())
		if err != nil {
			s.opts.Logger.Error("throttle: count failure", "err", err.Error())
			continue
		}
		if over := t.Failures - k.free; over > 0 {
			d := p.Base
			for i := 1; i < over && d < p.Max; i++ {
				d *= 2
			}
			d = min(d, p.Max)
			if err := s.st.LockThrottle(ctx, k.key, now.Add(d).UnixMilli()); err != nil {
				s.opts.Logger.Error("throttle: lock", "err", err.Error())
			}
		}
	}
}

// succeeded forgets the failures of the IP and the account.
func (s *Service) succeeded(ctx context.Context, ip netip.Addr) {
	for _, k := range []string{ipKey(ip), accountKey} {
		if err := s.st.ResetThrottle(context.WithoutCancel(ctx), k); err != nil {
			s.opts.Logger.Error("throttle: reset", "err", err.Error())
		}
	}
}
