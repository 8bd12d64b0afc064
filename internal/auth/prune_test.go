package auth

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestPrune: what can no longer authenticate or lock anyone out is
// deleted; a live session and a live lockout stay.
func TestPrune(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		f.setUp() // a session that will go idle
		stale := netip.MustParseAddr("198.51.100.1")
		if _, err := f.svc.Login(ctx, stale, "wrong password!!", "000000"); !errors.Is(err, ErrUnauthorized) {
			t.Fatal(err)
		}
		f.clk.Add(25 * time.Hour) // the setup session is idle, the stale failure past its window
		f.clk.Add(30 * time.Second)
		live, err := f.svc.Login(ctx, f.ip, testPassword, f.code(0))
		if err != nil {
			t.Fatal(err)
		}
		f.clk.Add(30 * time.Second)
		revoked, err := f.svc.Login(ctx, f.ip, testPassword, f.code(0)) // revoked, though not idle
		if err != nil {
			t.Fatal(err)
		}
		if err := f.svc.Logout(ctx, revoked.Session); err != nil {
			t.Fatal(err)
		}
		locked := netip.MustParseAddr("198.51.100.2")
		for range 6 {
			_, _ = f.svc.Login(ctx, locked, "wrong password!!", "000000")
		}
		n, err := f.svc.Prune(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The idle and the revoked sessions, and the stale throttle record.
		if n != 3 {
			t.Errorf("pruned %d rows, want 3", n)
		}
		if _, err := f.svc.Authenticate(ctx, live.Secret); err != nil {
			t.Errorf("the live session was pruned: %v", err)
		}
		if _, err := f.st.GetThrottle(ctx, ipKey(stale)); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("stale throttle record: %v", err)
		}
		if th, err := f.st.GetThrottle(ctx, ipKey(locked)); err != nil || th.LockedUntil == 0 {
			t.Errorf("a live lockout was pruned: %+v %v", th, err)
		}
		if n, err := f.svc.Prune(ctx); err != nil || n != 0 {
			t.Errorf("second prune: %d %v", n, err)
		}
	})
}
