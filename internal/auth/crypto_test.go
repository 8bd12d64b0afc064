package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testArgon2 keeps tests fast; production uses DefaultArgon2.
var testArgon2 = Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1}

func TestPasswordHash(t *testing.T) {
	for _, p := range []Argon2Params{testArgon2, DefaultArgon2} {
		h, err := HashPassword("correct horse battery", p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(h, "$argon2id$v=19$m=") || strings.Contains(h, "correct horse") {
			t.Fatalf("hash %q is not a PHC argon2id string", h)
		}
		h2, _ := HashPassword("correct horse battery", p)
		if h == h2 {
			t.Fatal("two hashes of one password are equal: no salt?")
		}
		for _, c := range []struct {
			pw   string
			want bool
		}{{"correct horse battery", true}, {"correct horse batterY", false}, {"", false}} {
			if ok, err := VerifyPassword(c.pw, h); err != nil || ok != c.want {
				t.Fatalf("verify %q = %v, %v; want %v", c.pw, ok, err, c.want)
			}
		}
	}
	for _, bad := range []string{"", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", "$argon2id$v=19$m=99999999,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNoaGFzaA", "$argon2id$v=19$m=64,t=1,p=1$!!$aGFzaA"} {
		if _, err := VerifyPassword("x", bad); err == nil {
			t.Errorf("malformed hash %q verified without error", bad)
		}
	}
}

func TestPasswordPolicy(t *testing.T) {
	for _, c := range []struct {
		pw string
		ok bool
	}{{"short", false}, {strings.Repeat("a", 11), false}, {strings.Repeat("a", 12), true}, {strings.Repeat("é", 12), true}, {strings.Repeat("a", 1024), true}, {strings.Repeat("a", 1025), false}} {
		if err := checkPolicy(c.pw); (err == nil) != c.ok {
			t.Errorf("policy(%d bytes) = %v, want ok=%v", len(c.pw), err, c.ok)
		}
	}
}

// TestTOTPVectors checks HOTP/TOTP against RFC 6238 appendix B (SHA-1).
func TestTOTPVectors(t *testing.T) {
	secret := []byte("12345678901234567890")
	for _, v := range []struct {
		unix int64
		code string
	}{{59, "94287082"}, {1111111109, "07081804"}, {1111111111, "14050471"}, {1234567890, "89005924"}, {2000000000, "69279037"}, {20000000000, "65353130"}} {
		if got := hotp(secret, uint64(totpStep(time.Unix(v.unix, 0))), 8); got != v.code {
			t.Errorf("T=%d: %s, want %s", v.unix, got, v.code)
		}
	}
	// Six digits are the last six of the RFC's eight; ±1 step is accepted.
	now := time.Unix(1111111111, 0)
	for _, c := range []struct {
		at   time.Time
		ok   bool
		step int64
	}{{now, true, 37037037}, {now.Add(-30 * time.Second), true, 37037036}, {now.Add(30 * time.Second), true, 37037038}, {now.Add(-90 * time.Second), false, 0}, {now.Add(90 * time.Second), false, 0}} {
		code := hotp(secret, uint64(totpStep(c.at)), 6)
		step, ok := matchTOTP(secret, code, now)
		if ok != c.ok || step != c.step {
			t.Errorf("code of %v at %v: step %d ok %v; want %d %v", c.at.Unix(), now.Unix(), step, ok, c.step, c.ok)
		}
	}
	if _, ok := matchTOTP(secret, "14050471", now); ok {
		t.Error("an 8-digit code was accepted")
	}
	if _, ok := matchTOTP(secret, "", now); ok {
		t.Error("an empty code was accepted")
	}
}

func TestLoadKey(t *testing.T) {
	dir := t.TempDir()
	none := func(string) string { return "" }
	k1, err := LoadKey(none, dir)
	if err != nil || len(k1) != 32 {
		t.Fatalf("first key: %v", err)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, fi.Mode())
	}
	k2, err := LoadKey(none, dir)
	if err != nil || string(k1) != string(k2) {
		t.Fatalf("second load differs: %v", err)
	}
	env := func(k string) string {
		if k == "AOS_SECRET_KEY" {
			return strings.Repeat("ab", 32)
		}
		return ""
	}
	if k, err := LoadKey(env, t.TempDir()); err != nil || k[0] != 0xab {
		t.Fatalf("env key: %x, %v", k, err)
	}
	bad := func(string) string { return "abcd" }
	if _, err := LoadKey(bad, dir); err == nil || strings.Contains(err.Error(), "abcd") {
		t.Fatalf("short AOS_SECRET_KEY: %v", err)
	}
	s, _ := newSealer(k1)
	enc, _ := s.seal([]byte("totp"), purposeTOTP)
	if p, err := s.open(enc, purposeTOTP); err != nil || string(p) != "totp" {
		t.Fatalf("open: %q %v", p, err)
	}
	if _, err := s.open(enc, "another purpose"); err == nil {
		t.Fatal("opened under another purpose")
	}
	k3, _ := LoadKey(env, t.TempDir())
	other, _ := newSealer(k3)
	if _, err := other.open(enc, purposeTOTP); err == nil {
		t.Fatal("opened with another key")
	}
}
