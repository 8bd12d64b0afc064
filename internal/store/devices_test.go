package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestDevicePairingQueries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		p := store.DevicePairing{Hash: "h1", Name: "phone", CreatedAt: 100, ExpiresAt: 200}
		if err := s.InsertDevicePairing(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertDevicePairing(ctx, store.DevicePairing{Hash: "h1", Name: "x", CreatedAt: 101, ExpiresAt: 300}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("same hash again: %v, want ErrConflict", err)
		}
		// Expired at now: refused, and the next insert prunes it.
		if _, err := s.TakeDevicePairing(ctx, "h1", 200); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("take at expiry: %v, want ErrNotFound", err)
		}
		if got, err := s.TakeDevicePairing(ctx, "h1", 199); err != nil || got != p {
			t.Fatalf("take = %+v, %v; want %+v", got, err, p)
		}
		if _, err := s.TakeDevicePairing(ctx, "h1", 150); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("second take: %v, want ErrNotFound (single use)", err)
		}
		// Concurrent takes of one code: exactly one wins.
		if err := s.InsertDevicePairing(ctx, store.DevicePairing{Hash: "h2", Name: "robot", CreatedAt: 100, ExpiresAt: 500}); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		wins := 0
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := s.TakeDevicePairing(ctx, "h2", 150); err == nil {
					mu.Lock()
					wins++
					mu.Unlock()
				} else if !errors.Is(err, store.ErrNotFound) && !s.IsTransient(err) {
					t.Errorf("concurrent take: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Errorf("%d concurrent takes won, want exactly 1", wins)
		}
		// An insert prunes expired codes.
		if err := s.InsertDevicePairing(ctx, store.DevicePairing{Hash: "old", Name: "o", CreatedAt: 1, ExpiresAt: 2}); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertDevicePairing(ctx, store.DevicePairing{Hash: "new", Name: "n", CreatedAt: 3, ExpiresAt: 9}); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertDevicePairing(ctx, store.DevicePairing{Hash: "old", Name: "o2", CreatedAt: 3, ExpiresAt: 9}); err != nil {
			t.Errorf("re-insert of a pruned hash: %v", err)
		}
	})
}

func TestDeviceQueries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		a := store.Device{ID: "a", Name: "phone", TokenHash: "ta", CreatedAt: 1}
		b := store.Device{ID: "b", Name: "robot", TokenHash: "tb", CreatedAt: 2}
		for _, d := range []store.Device{b, a} {
			if err := s.InsertDevice(ctx, d); err != nil {
				t.Fatal(err)
			}
		}
		for name, d := range map[string]store.Device{
			"same id":    {ID: "a", Name: "x", TokenHash: "tx"},
			"same token": {ID: "c", Name: "x", TokenHash: "tb"},
		} {
			if err := s.InsertDevice(ctx, d); !errors.Is(err, store.ErrConflict) {
				t.Errorf("insert with %s: %v, want ErrConflict", name, err)
			}
		}
		ds, err := s.ListDevices(ctx)
		if err != nil || len(ds) != 2 || ds[0] != a || ds[1] != b {
			t.Fatalf("list = %+v, %v; want a then b", ds, err)
		}
		if got, err := s.GetDeviceByTokenHash(ctx, "tb"); err != nil || got != b {
			t.Fatalf("by token = %+v, %v", got, err)
		}
		if err := s.TouchDevice(ctx, "a", 10); err != nil {
			t.Fatal(err)
		}
		if err := s.TouchDevice(ctx, "a", 5); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetDevice(ctx, "a"); got.LastSeenAt != 10 {
			t.Errorf("last seen = %d, want 10 (never backwards)", got.LastSeenAt)
		}
		if err := s.RevokeDevice(ctx, "a", 20); err != nil {
			t.Fatal(err)
		}
		if err := s.RevokeDevice(ctx, "a", 21); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("revoke twice: %v, want ErrNotFound", err)
		}
		if err := s.RevokeDevice(ctx, "nope", 21); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("revoke unknown: %v, want ErrNotFound", err)
		}
		got, err := s.GetDevice(ctx, "a")
		if err != nil || got.RevokedAt != 20 || got.TokenHash != "ta" {
			t.Fatalf("revoked device = %+v, %v; want kept with revoked_at 20", got, err)
		}
		if err := s.TouchDevice(ctx, "a", 30); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetDevice(ctx, "a"); got.LastSeenAt != 10 {
			t.Errorf("a revoked device was touched: %d", got.LastSeenAt)
		}
		if _, err := s.GetDevice(ctx, "zz"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("get unknown: %v", err)
		}
		if _, err := s.GetDeviceByTokenHash(ctx, "zz"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("by unknown token: %v", err)
		}
	})
}
