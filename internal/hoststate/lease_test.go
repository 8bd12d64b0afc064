package hoststate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"
)

func TestDeviceSingleton(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	live := func(Lease) bool { return false }
	claim := func(s *Store, pid int, at time.Time, gone func(Lease) bool) (Lease, error) {
		return ClaimDevice(ctx, s, Claim{Owner: "aos up", Subject: "datadir:x", PID: pid, URL: "http://127.0.0.1:1", Duration: 10 * time.Second, Now: at, Gone: gone})
	}
	t.Run("duplicate owner refused with its pid and url", func(t *testing.T) {
		t.Parallel()
		s := mustStore(t, t.TempDir())
		first, err := claim(s, 111, now, live)
		if err != nil {
			t.Fatal(err)
		}
		before, _ := s.Load(ctx)
		_, err = claim(mustStore(t, s.dir), 222, now.Add(9*time.Second), live)
		var he *HeldError
		if !errors.As(err, &he) || he.Holder.PID != 111 || he.Holder.URL != "http://127.0.0.1:1" || he.Holder.Token != first.Token {
			t.Fatalf("second owner: %v", err)
		}
		if after, _ := s.Load(ctx); after.Revision != before.Revision {
			t.Fatalf("a refused claim wrote revision %d", after.Revision)
		}
	})
	t.Run("expired lease taken over", func(t *testing.T) {
		t.Parallel()
		s := mustStore(t, t.TempDir())
		first, _ := claim(s, 111, now, live)
		second, err := claim(s, 222, now.Add(10*time.Second), live)
		if err != nil || second.Token == first.Token {
			t.Fatalf("takeover after expiry: %+v %v", second, err)
		}
		if err := RenewDevice(ctx, s, first.Token, now.Add(10*time.Second), time.Second); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("the old owner's renewal: %v, want lease_lost", err)
		}
		// The old owner's release never frees the successor.
		if err := ReleaseDevice(ctx, s, first.Token); err != nil {
			t.Fatal(err)
		}
		if _, err := claim(s, 333, now.Add(11*time.Second), live); !errors.Is(err, ErrLeaseHeld) {
			t.Fatalf("after a stale release: %v, want held", err)
		}
	})
	t.Run("restart after kill -9: a provably gone owner is released at once", func(t *testing.T) {
		t.Parallel()
		s := mustStore(t, t.TempDir())
		dead := exec.Command("true")
		if err := dead.Run(); err != nil {
			t.Fatal(err)
		}
		if _, err := ClaimDevice(ctx, s, Claim{Owner: "aos up", PID: dead.Process.Pid, Duration: time.Hour, Now: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if _, err := ClaimDevice(ctx, s, Claim{Owner: "aos up", PID: os.Getpid(), Duration: time.Hour, Now: time.Now()}); err != nil {
			t.Fatalf("claim after the owner died: %v", err)
		}
		// And a live owner (this process) is not gone.
		if _, err := ClaimDevice(ctx, s, Claim{Owner: "aos up", PID: 1, Duration: time.Hour, Now: time.Now()}); !errors.Is(err, ErrLeaseHeld) {
			t.Fatalf("claim over a live owner: %v", err)
		}
	})
	t.Run("renew extends only the exact token", func(t *testing.T) {
		t.Parallel()
		s := mustStore(t, t.TempDir())
		l, _ := claim(s, 111, now, live)
		if err := RenewDevice(ctx, s, l.Token, now.Add(5*time.Second), 10*time.Second); err != nil {
			t.Fatal(err)
		}
		forged := l.Token
		forged.Subject = "datadir:other"
		if err := RenewDevice(ctx, s, forged, now.Add(6*time.Second), 10*time.Second); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("renewal with another subject: %v", err)
		}
		if _, err := claim(s, 222, now.Add(14*time.Second), live); !errors.Is(err, ErrLeaseHeld) {
			t.Fatalf("renewed lease taken: %v", err)
		}
	})
}

// TestGuardCancelsOnLostToken: the supervisor renews the lease; once the
// state holds another token, the next renewal cannot prove the token and
// the guarded context is cancelled with lease_lost as its cause.
func TestGuardCancelsOnLostToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := mustStore(t, t.TempDir())
	// Long enough that a renewal delayed by a loaded machine (each one
	// writes and fsyncs the state file) is still in time: at 300 ms the
	// guard's context ended while renewing, once, under load.
	const d = 2 * time.Second
	l, err := ClaimDevice(ctx, s, Claim{Owner: "aos up", PID: os.Getpid(), Duration: d, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	g, stop := Guard(ctx, s, l.Token, d, time.Now)
	t.Cleanup(stop)
	// Renewals keep it alive well past its first expiry.
	deadline := time.Now().Add(3 * d)
	for time.Now().Before(deadline) {
		if g.Err() != nil {
			t.Fatalf("guarded context ended while renewing: %v", context.Cause(g))
		}
		time.Sleep(d / 10)
	}
	// Another owner takes the state over.
	_, err = s.Update(ctx, func(snap Snapshot) (json.RawMessage, error) {
		var st State
		_ = json.Unmarshal(snap.State, &st)
		if st.Device == nil || st.Device.ExpiresAt <= time.Now().UnixMilli() {
			return nil, errors.New("lease not renewed")
		}
		st.Device.Token.Token = "someone-else"
		return json.Marshal(st)
	})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("guarded context not cancelled after the token changed")
	}
	if !errors.Is(context.Cause(g), ErrLeaseLost) {
		t.Fatalf("cause = %v, want lease_lost", context.Cause(g))
	}
}
