package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestOwnerAccount(t *testing.T) {
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
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		if _, err := s.GetThrottle(ctx, "ip:1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("fresh key: %v", err)
		}
		// Concurrent failures are all counted (several servers, one row).
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.AddThrottleFailure(ctx, "ip:1", 100, 0); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if got, err := s.GetThrottle(ctx, "ip:1"); err != nil || got.Failures != 8 || got.LastFailure != 100 {
			t.Fatalf("after 8 failures: %+v, %v", got, err)
		}
		if err := s.LockThrottle(ctx, "ip:1", 500); err != nil {
			t.Fatal(err)
		}
		// A failure after the reset horizon starts the count again.
		got, err := s.AddThrottleFailure(ctx, "ip:1", 1000, 900)
		if err != nil || got.Failures != 1 || got.LockedUntil != 500 {
			t.Fatalf("after the window: %+v, %v", got, err)
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

		if err := s.InsertCeremony(ctx, store.Ceremony{Challenge: "ch", Kind: "login", Data: "{}", ExpiresAt: 100}); err != nil {
			t.Fatal(err)
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
