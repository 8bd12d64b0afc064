package store_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestOwnerAccount(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		if _, err := s.GetOwner(ctx); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("owner before setup: %v, want ErrNotFound", err)
		}
		o := store.Owner{PasswordHash: "$argon2id$x", TOTPSecretEnc: "enc", WebAuthnUserID: "uid", CreatedAt: 5}
		if err := s.InsertOwner(ctx, o); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertOwner(ctx, o); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second owner: %v, want ErrConflict", err)
		}
		if got, err := s.GetOwner(ctx); err != nil || got != o {
			t.Fatalf("owner = %+v, %v; want %+v", got, err, o)
		}
		for _, c := range []struct {
			step int64
			want error
		}{{10, nil}, {10, store.ErrConflict}, {9, store.ErrConflict}, {11, nil}} {
			if err := s.UseTOTPStep(ctx, c.step); !errors.Is(err, c.want) {
				t.Fatalf("use step %d: %v, want %v", c.step, err, c.want)
			}
		}
	})
}

func TestSetupToken(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		if _, err := s.GetSetupToken(ctx); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("no token yet: %v", err)
		}
		if err := s.PutSetupToken(ctx, store.SetupToken{Hash: "h1", ExpiresAt: 100, CreatedAt: 1}); err != nil {
			t.Fatal(err)
		}
		if err := s.SetSetupPending(ctx, "h1", "p1"); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetSetupToken(ctx); got.PendingTOTPEnc != "p1" {
			t.Fatalf("pending = %+v", got)
		}
		// A new token replaces the old one and its pending secret.
		if err := s.PutSetupToken(ctx, store.SetupToken{Hash: "h2", ExpiresAt: 200, CreatedAt: 2}); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetSetupToken(ctx); got != (store.SetupToken{Hash: "h2", ExpiresAt: 200, CreatedAt: 2}) {
			t.Fatalf("replaced token = %+v", got)
		}
		if err := s.SetSetupPending(ctx, "h1", "p"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("pending on the old token: %v", err)
		}
		if err := s.DeleteSetupToken(ctx, "h1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete old token: %v", err)
		}
		if err := s.DeleteSetupToken(ctx, "h2"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteSetupToken(ctx, "h2"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("token consumed twice: %v", err)
		}
	})
}

func TestSessions(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		ss := store.Session{PublicID: "p1", Hash: "h1", Method: "password", CreatedAt: 10, LastSeenAt: 10}
		if err := s.InsertSession(ctx, ss); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertSession(ctx, store.Session{PublicID: "p2", Hash: "h1", Method: "password"}); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate hash: %v", err)
		}
		if err := s.TouchSession(ctx, "p1", 20); err != nil {
			t.Fatal(err)
		}
		if err := s.TouchSession(ctx, "p1", 15); err != nil { // never backwards
			t.Fatal(err)
		}
		if got, err := s.GetSessionByHash(ctx, "h1"); err != nil || got.LastSeenAt != 20 || got.PublicID != "p1" {
			t.Fatalf("session = %+v, %v", got, err)
		}
		if err := s.RevokeSession(ctx, "p1", 30); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeSession(ctx, "p1", 31); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("revoke twice: %v", err)
		}
		if got, _ := s.GetSessionByHash(ctx, "h1"); got.RevokedAt != 30 {
			t.Fatalf("revoked session = %+v", got)
		}
		if _, err := s.GetSessionByHash(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unknown session: %v", err)
		}
	})
}

func TestThrottle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		if _, err := s.GetThrottle(ctx, "ip:1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("fresh key: %v", err)
		}
		p := store.ReserveThrottleParams{Key: "ip:1", Now: 100, ResetBefore: 0, Free: 5, Base: 60, Max: 1000}
		// 40 concurrent attempts (several servers, one row): the first
		// five count freely, the sixth counts and locks, and the lock is
		// seen by every later one, which changes nothing.
		var wg sync.WaitGroup
		var mu sync.Mutex
		reserved := 0
		for i := 0; i < 40; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, ok, err := s.ReserveThrottle(ctx, p)
				if err != nil {
					t.Error(err)
				}
				if ok {
					mu.Lock()
					reserved++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		got, err := s.GetThrottle(ctx, "ip:1")
		if err != nil || reserved != 6 || got.Failures != 6 || got.LastFailure != 100 || got.LockedUntil != 160 {
			t.Fatalf("after 40 concurrent attempts: %d reserved, %+v, %v", reserved, got, err)
		}
		// Once the lock ends, the next attempt counts and locks twice as
		// long; then 4x, ... up to Max.
		for i, want := range []int64{120, 240, 480, 960, 1000, 1000} {
			p.Now = got.LockedUntil
			g, ok, err := s.ReserveThrottle(ctx, p)
			if err != nil || !ok || g.LockedUntil-p.Now != want || g.Failures != int(7+i) {
				t.Fatalf("attempt %d: %+v %v %v, want a lock of %d", 7+i, g, ok, err, want)
			}
			got = g
		}
		// A locked key is left alone.
		p.Now = got.LockedUntil - 1
		if g, ok, err := s.ReserveThrottle(ctx, p); err != nil || ok || g != got {
			t.Fatalf("locked: %+v %v %v", g, ok, err)
		}
		// An attempt after the reset horizon starts the count again.
		p.Now, p.ResetBefore = got.LockedUntil+5000, got.LockedUntil+1
		if g, ok, err := s.ReserveThrottle(ctx, p); err != nil || !ok || g.Failures != 1 || g.LockedUntil != 0 {
			t.Fatalf("after the window: %+v %v %v", g, ok, err)
		}
		// Free 0: the first attempt locks already (a new row).
		if g, ok, err := s.ReserveThrottle(ctx, store.ReserveThrottleParams{Key: "k0", Now: 10, Base: 7, Max: 7}); err != nil || !ok || g.LockedUntil != 17 {
			t.Fatalf("free 0: %+v %v %v", g, ok, err)
		}
		if err := s.ResetThrottle(ctx, "ip:1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetThrottle(ctx, "ip:1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after reset: %v", err)
		}
	})
}

func TestWebAuthnStorage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		c := store.WebAuthnCredential{ID: "c1", Name: "laptop", Credential: `{"id":"x"}`, CreatedAt: 1}
		if err := s.InsertWebAuthnCredential(ctx, c); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertWebAuthnCredential(ctx, c); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("duplicate credential: %v", err)
		}
		if err := s.UpdateWebAuthnCredential(ctx, "c1", `{"id":"y"}`, 7); err != nil {
			t.Fatal(err)
		}
		cs, err := s.ListWebAuthnCredentials(ctx)
		if err != nil || len(cs) != 1 || cs[0].Credential != `{"id":"y"}` || cs[0].LastUsedAt != 7 || cs[0].Name != "laptop" {
			t.Fatalf("credentials = %+v, %v", cs, err)
		}
		if err := s.DeleteWebAuthnCredential(ctx, "c1"); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteWebAuthnCredential(ctx, "c1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete twice: %v", err)
		}

		if err := s.InsertCeremony(ctx, store.Ceremony{Challenge: "ch", Kind: "login", Data: "{}", ExpiresAt: 100}, 0, 0); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertCeremony(ctx, store.Ceremony{Challenge: "ch", Kind: "login", Data: "{}", ExpiresAt: 100}, 0, 0); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("the same challenge twice: %v", err)
		}
		if _, err := s.TakeCeremony(ctx, "register", "ch", 50); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("take with the wrong kind: %v", err)
		}
		if _, err := s.TakeCeremony(ctx, "login", "ch", 100); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("take expired: %v", err)
		}
		if got, err := s.TakeCeremony(ctx, "login", "ch", 99); err != nil || got.Data != "{}" {
			t.Fatalf("take = %+v, %v", got, err)
		}
		if _, err := s.TakeCeremony(ctx, "login", "ch", 99); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("take twice: %v", err)
		}
	})
}

// TestCeremonyCap: at most maxLive live ceremonies of a kind; expired ones
// are deleted first and do not count, and another kind has its own cap.
func TestCeremonyCap(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		ins := func(ch, kind string, exp, now int64) error {
			return s.InsertCeremony(ctx, store.Ceremony{Challenge: ch, Kind: kind, Data: "{}", ExpiresAt: exp}, now, 3)
		}
		for i, exp := range []int64{50, 200, 200} {
			if err := ins(fmt.Sprint("c", i), "login", exp, 10); err != nil {
				t.Fatal(err)
			}
		}
		if err := ins("c3", "login", 200, 10); !errors.Is(err, store.ErrLimit) {
			t.Fatalf("a fourth live ceremony: %v", err)
		}
		if err := ins("r0", "register", 200, 10); err != nil {
			t.Fatalf("another kind: %v", err)
		}
		// At 50 the first has expired: it is deleted and there is room.
		if err := ins("c3", "login", 300, 50); err != nil {
			t.Fatalf("after one expired: %v", err)
		}
		if err := ins("c4", "login", 300, 50); !errors.Is(err, store.ErrLimit) {
			t.Fatalf("full again: %v", err)
		}
		if _, err := s.TakeCeremony(ctx, "login", "c0", 10); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("the expired ceremony is gone: %v", err)
		}
	})
}
