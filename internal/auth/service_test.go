package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

const testPassword = "a long enough passphrase"

type fixture struct {
	t     *testing.T
	st    store.Store
	svc   *Service
	clk   *clock
	logs  *bytes.Buffer
	ip    netip.Addr
	totp  []byte // the owner's TOTP secret, once set up
	setup string // the setup token
}

func newFixture(t *testing.T, db storetest.DB) *fixture {
	t.Helper()
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	logs := &bytes.Buffer{}
	key := bytes.Repeat([]byte{7}, 32)
	svc, err := New(db.Store, Options{PublicOrigin: "http://localhost:8640", Key: key, Now: clk.Now, Argon2: testArgon2,
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, st: db.Store, svc: svc, clk: clk, logs: logs, ip: netip.MustParseAddr("192.0.2.7")}
}

// code is the owner's TOTP code for the current time, shifted by steps.
func (f *fixture) code(steps int64) string {
	return hotp(f.totp, uint64(totpStep(f.clk.Now())+steps), 6)
}

// setUp runs the whole setup and returns the session.
func (f *fixture) setUp() NewSession {
	f.t.Helper()
	ctx := context.Background()
	tok, _, err := f.svc.IssueSetupToken(ctx, "test")
	if err != nil {
		f.t.Fatal(err)
	}
	f.setup = tok
	sec, err := f.svc.BeginSetup(ctx, f.ip, tok)
	if err != nil {
		f.t.Fatal(err)
	}
	if f.totp, err = b32.DecodeString(sec.TOTPSecret); err != nil {
		f.t.Fatal(err)
	}
	ns, err := f.svc.CompleteSetup(ctx, f.ip, tok, testPassword, f.code(0))
	if err != nil {
		f.t.Fatalf("complete setup: %v", err)
	}
	return ns
}

// noSecrets fails if the audit log or the logs hold any secret given.
func (f *fixture) noSecrets(secrets ...string) {
	f.t.Helper()
	recs, err := f.st.ListAudit(context.Background(), store.ListAuditParams{Limit: 1000})
	if err != nil {
		f.t.Fatal(err)
	}
	hay := f.logs.String()
	for _, r := range recs {
		hay += r.Actor + r.Action + r.Target + string(r.Detail)
	}
	secrets = append(secrets, testPassword, b32.EncodeToString(f.totp))
	for _, s := range secrets {
		if s != "" && strings.Contains(hay, s) {
			f.t.Errorf("a secret (%.6s…) is in the audit log or the logs", s)
		}
	}
}

func (f *fixture) audited(action string) int {
	recs, _ := f.st.ListAudit(context.Background(), store.ListAuditParams{Limit: 1000})
	n := 0
	for _, r := range recs {
		if r.Action == action {
			n++
		}
	}
	return n
}

func TestSetupFlow(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		if req, err := f.svc.SetupRequired(ctx); err != nil || !req {
			t.Fatalf("setup required = %v, %v", req, err)
		}
		old, _, err := f.svc.IssueSetupToken(ctx, "test")
		if err != nil {
			t.Fatal(err)
		}
		tok, exp, err := f.svc.IssueSetupToken(ctx, "test")
		if err != nil || !strings.HasPrefix(tok, SetupTokenPrefix) || tok == old || exp.Sub(f.clk.Now()) != 24*time.Hour {
			t.Fatalf("second token %v, expiry %v", err, exp)
		}
		// The earlier token was replaced; a wrong one is refused.
		for _, bad := range []string{old, "", tok + "x"} {
			if _, err := f.svc.BeginSetup(ctx, f.ip, bad); !errors.Is(err, ErrUnauthorized) {
				t.Fatalf("begin with a bad token: %v", err)
			}
		}
		// Complete before begin is refused.
		if _, err := f.svc.CompleteSetup(ctx, f.ip, tok, testPassword, "000000"); !errors.Is(err, ErrConflict) {
			t.Fatalf("complete before begin: %v", err)
		}
		sec, err := f.svc.BeginSetup(ctx, f.ip, tok)
		if err != nil || !strings.HasPrefix(sec.OTPAuthURL, "otpauth://totp/") || !strings.Contains(sec.OTPAuthURL, "secret="+sec.TOTPSecret) {
			t.Fatalf("begin: %+v %v", sec, err)
		}
		f.totp, _ = b32.DecodeString(sec.TOTPSecret)
		for _, c := range []struct {
			name, pw, code string
			want           error
		}{
			{"short password", "short", f.code(0), ErrInvalidInput},
			{"long password", strings.Repeat("p", 1025), f.code(0), ErrInvalidInput},
			{"wrong code", testPassword, f.code(5), ErrUnauthorized},
		} {
			if _, err := f.svc.CompleteSetup(ctx, f.ip, tok, c.pw, c.code); !errors.Is(err, c.want) {
				t.Fatalf("%s: %v, want %v", c.name, err, c.want)
			}
			if req, _ := f.svc.SetupRequired(ctx); !req {
				t.Fatalf("%s changed state", c.name)
			}
		}
		ns, err := f.svc.CompleteSetup(ctx, f.ip, tok, testPassword, f.code(0))
		if err != nil || ns.Secret == "" || ns.CSRFToken == "" || ns.PublicID == "" {
			t.Fatalf("complete: %+v %v", ns, err)
		}
		// Reused token, and setup once done, are refused.
		if _, err := f.svc.CompleteSetup(ctx, f.ip, tok, testPassword, f.code(1)); !errors.Is(err, ErrConflict) {
			t.Fatalf("complete again: %v", err)
		}
		if _, err := f.svc.BeginSetup(ctx, f.ip, tok); !errors.Is(err, ErrConflict) {
			t.Fatalf("begin after setup: %v", err)
		}
		if _, _, err := f.svc.IssueSetupToken(ctx, "test"); !errors.Is(err, ErrConflict) {
			t.Fatalf("issue after setup: %v", err)
		}
		o, _ := f.st.GetOwner(ctx)
		if strings.Contains(o.TOTPSecretEnc, sec.TOTPSecret) || !strings.HasPrefix(o.PasswordHash, "$argon2id$") {
			t.Fatalf("owner row holds a secret in the clear: %+v", o)
		}
		if f.audited("auth.setup") != 1 || f.audited("auth.setup_token.issue") != 2 {
			t.Fatal("setup not audited")
		}
		// Three wrong tokens and one wrong code; one good begin.
		if got := f.audited("auth.setup.failure"); got != 4 {
			t.Fatalf("auth.setup.failure audited %d times, want 4", got)
		}
		if got := f.audited("auth.setup.begin"); got != 1 {
			t.Fatalf("auth.setup.begin audited %d times, want 1", got)
		}
		f.noSecrets(tok, old, ns.Secret, ns.CSRFToken)
	})
}

func TestSetupTokenExpires(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		tok, _, err := f.svc.IssueSetupToken(ctx, "test")
		if err != nil {
			t.Fatal(err)
		}
		f.clk.Add(24 * time.Hour)
		if _, err := f.svc.BeginSetup(ctx, f.ip, tok); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("begin with an expired token: %v", err)
		}
	})
}

func TestLoginAndReplay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		f.setUp()
		// The setup's code was used: wait for the next step.
		f.clk.Add(30 * time.Second)
		code := f.code(0)
		ns, err := f.svc.Login(ctx, f.ip, testPassword, code)
		if err != nil {
			t.Fatalf("login: %v", err)
		}
		if _, err := f.svc.Login(ctx, f.ip, testPassword, code); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("replayed code: %v, want unauthorized", err)
		}
		if _, err := f.svc.Login(ctx, f.ip, testPassword, f.code(-1)); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("an older code after a newer one: %v", err)
		}
		if _, err := f.svc.Login(ctx, f.ip, "wrong password!!", f.code(1)); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("wrong password: %v", err)
		}
		// A code of the next step (clock skew) is accepted once.
		if _, err := f.svc.Login(ctx, f.ip, testPassword, f.code(1)); err != nil {
			t.Fatalf("next-step code: %v", err)
		}
		ses, err := f.svc.Authenticate(ctx, ns.Secret)
		if err != nil || ses.PublicID != ns.PublicID {
			t.Fatalf("authenticate: %+v %v", ses, err)
		}
		if err := f.svc.Logout(ctx, ses); err != nil {
			t.Fatal(err)
		}
		if _, err := f.svc.Authenticate(ctx, ns.Secret); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("after logout: %v", err)
		}
		if f.audited("auth.login") != 2 || f.audited("auth.login.failure") != 3 || f.audited("auth.logout") != 1 {
			t.Fatal("logins, failures and logout are not all audited")
		}
		f.noSecrets(ns.Secret, ns.CSRFToken, code)
	})
}

func TestSessionExpiry(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		ns := f.setUp()
		// Idle expiry: used every 23 h, the session lives on...
		for range 3 {
			f.clk.Add(23 * time.Hour)
			if _, err := f.svc.Authenticate(ctx, ns.Secret); err != nil {
				t.Fatalf("session used within the idle timeout: %v", err)
			}
		}
		// ...and 24 h unused ends it.
		f.clk.Add(24 * time.Hour)
		if _, err := f.svc.Authenticate(ctx, ns.Secret); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("idle session: %v", err)
		}
		// Absolute expiry: 14 days, however busy.
		f.clk.Add(30 * time.Second)
		ns2, err := f.svc.Login(ctx, f.ip, testPassword, f.code(0))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 14*24; i += 12 {
			f.clk.Add(12 * time.Hour)
			_, err := f.svc.Authenticate(ctx, ns2.Secret)
			if ended := i+12 >= 14*24; ended != errors.Is(err, ErrUnauthorized) {
				t.Fatalf("after %d h: %v", i+12, err)
			}
		}
		// Check (the events socket's re-check) does not move the idle expiry.
		ns3, err := f.svc.Login(ctx, f.ip, testPassword, f.code(0))
		if err != nil {
			t.Fatal(err)
		}
		f.clk.Add(23 * time.Hour)
		if _, err := f.svc.Check(ctx, ns3.Secret); err != nil {
			t.Fatalf("check within the idle timeout: %v", err)
		}
		f.clk.Add(2 * time.Hour)
		if _, err := f.svc.Check(ctx, ns3.Secret); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("check after 25 h idle: %v", err)
		}
		if _, err := f.svc.Authenticate(ctx, "not-a-session"); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("malformed session id: %v", err)
		}
	})
}

func TestLoginThrottle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		f.setUp()
		f.clk.Add(30 * time.Second)
		// Per IP: five failures are free, the sixth locks for 1 minute.
		for i := 0; i < 6; i++ {
			if _, err := f.svc.Login(ctx, f.ip, "wrong password!!", "000000"); !errors.Is(err, ErrUnauthorized) {
				t.Fatalf("failure %d: %v", i, err)
			}
		}
		// Locked: even the right credentials are not looked at.
		var te *Error
		_, err := f.svc.Login(ctx, f.ip, testPassword, f.code(0))
		if !errors.As(err, &te) || te.Code != CodeThrottled || te.RetryAfter != time.Minute {
			t.Fatalf("locked login: %v", err)
		}
		// Another IP is not locked (the account allows 10 failures).
		other := netip.MustParseAddr("198.51.100.9")
		if _, err := f.svc.Login(ctx, other, "wrong password!!", "000000"); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("other IP: %v", err)
		}
		// The lockout escalates: one more failure after it ends locks 2 min.
		f.clk.Add(time.Minute)
		if _, err := f.svc.Login(ctx, f.ip, "wrong password!!", "000000"); !errors.Is(err, ErrUnauthorized) {
			t.Fatalf("after lockout: %v", err)
		}
		if _, err := f.svc.Login(ctx, f.ip, testPassword, f.code(0)); !errors.As(err, &te) || te.RetryAfter != 2*time.Minute {
			t.Fatalf("escalated lockout: %v", err)
		}
		// Per account: failures from many IPs add up (6+1+1+3 = 11 > 10),
		// and the 11th delays the account a minute.
		f.clk.Add(2 * time.Minute)
		spread := func(i int) {
			t.Helper()
			ip := netip.AddrFrom4([4]byte{203, 0, 113, byte(i)})
			if _, err := f.svc.Login(ctx, ip, "wrong password!!", "000000"); !errors.Is(err, ErrUnauthorized) {
				t.Fatalf("spread failure %d: %v", i, err)
			}
		}
		for i := 0; i < 3; i++ {
			spread(i)
		}
		fresh := netip.MustParseAddr("203.0.113.200")
		if _, err := f.svc.Login(ctx, fresh, testPassword, f.code(0)); !errors.As(err, &te) || te.Code != CodeThrottled || te.RetryAfter != time.Minute {
			t.Fatalf("account delay from a fresh IP: %v", err)
		}
		// The account's delay does not grow: each further failure once it
		// ends delays it one minute again, never more.
		for i := 3; i < 8; i++ {
			f.clk.Add(time.Minute)
			spread(i)
			if _, err := f.svc.Login(ctx, fresh, testPassword, f.code(0)); !errors.As(err, &te) || te.RetryAfter != time.Minute {
				t.Fatalf("account delay after %d more failures: %v", i-2, err)
			}
		}
		// A minute later the right credentials work and reset it.
		f.clk.Add(time.Minute)
		if _, err := f.svc.Login(ctx, fresh, testPassword, f.code(0)); err != nil {
			t.Fatalf("after the account delay: %v", err)
		}
		if _, err := f.st.GetThrottle(ctx, accountKey); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("account throttle after success: %v", err)
		}
	})
}

// TestHashSlots: while every argon2 slot is taken, a login waits
// HashWait and is refused with ErrThrottled (Retry-After 1 s) without
// hashing; once a slot frees, it proceeds.
func TestHashSlots(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		f.setUp()
		f.clk.Add(30 * time.Second)
		if cap(f.svc.slots) != 2*runtime.GOMAXPROCS(0) {
			t.Fatalf("%d slots, want 2×GOMAXPROCS", cap(f.svc.slots))
		}
		for range cap(f.svc.slots) {
			f.svc.slots <- struct{}{}
		}
		var te *Error
		if _, err := f.svc.Login(ctx, f.ip, testPassword, f.code(0)); !errors.As(err, &te) || te.Code != CodeThrottled || te.RetryAfter != time.Second {
			t.Fatalf("login with every slot taken: %v", err)
		}
		<-f.svc.slots
		if _, err := f.svc.Login(ctx, f.ip, testPassword, f.code(0)); err != nil {
			t.Fatalf("login with a free slot: %v", err)
		}
		if len(f.svc.slots) != cap(f.svc.slots)-1 {
			t.Fatalf("the login kept its slot: %d taken", len(f.svc.slots))
		}
	})
}

// TestNames: passkey names with a control character are refused.
func TestNames(t *testing.T) {
	for name, ok := range map[string]bool{"laptop": true, "": true, "clé USB": true, strings.Repeat("x", 100): true,
		strings.Repeat("x", 101): false, "a\x1b[31mred": false, "tab\there": false, "nl\n": false, "del\x7f": false, "c1\u009b": false, "rlo\u202egnp": false, "bom\ufeffx": false, "bad\xff": false} {
		if err := checkName(name); (err == nil) != ok {
			t.Errorf("checkName(%q) = %v, want ok %v", name, err, ok)
		}
	}
}

func TestSetupThrottle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		tok, _, err := f.svc.IssueSetupToken(ctx, "test")
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 6; i++ {
			if _, err := f.svc.BeginSetup(ctx, f.ip, "aos_setup_wrong"); !errors.Is(err, ErrUnauthorized) {
				t.Fatalf("wrong setup token %d: %v", i, err)
			}
		}
		var te *Error
		if _, err := f.svc.BeginSetup(ctx, f.ip, tok); !errors.As(err, &te) || te.Code != CodeThrottled {
			t.Fatalf("the right token while locked: %v", err)
		}
		if _, err := f.svc.CompleteSetup(ctx, f.ip, tok, testPassword, "000000"); !errors.As(err, &te) || te.Code != CodeThrottled {
			t.Fatalf("complete while locked: %v", err)
		}
		if _, err := f.svc.BeginSetup(ctx, netip.MustParseAddr("198.51.100.1"), tok); err != nil {
			t.Fatalf("another IP: %v", err)
		}
	})
}

func TestIPKey(t *testing.T) {
	for in, want := range map[string]string{"192.0.2.1": "ip:192.0.2.1", "::ffff:192.0.2.1": "ip:192.0.2.1", "2001:db8:1:2:3:4:5:6": "ip:2001:db8:1:2::/64"} {
		if got := ipKey(netip.MustParseAddr(in)); got != want {
			t.Errorf("ipKey(%s) = %s, want %s", in, got, want)
		}
	}
	if got := ipKey(netip.Addr{}); got != "ip:unknown" {
		t.Errorf("invalid address: %s", got)
	}
}

// Status's JSON-free shape is used by the API; check it counts passkeys.
func TestStatus(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		f := newFixture(t, db)
		ctx := context.Background()
		st, err := f.svc.Status(ctx)
		if err != nil || !st.SetupRequired || st.Passkeys != 0 {
			t.Fatalf("status: %+v %v", st, err)
		}
		f.setUp()
		b, _ := json.Marshal(map[string]string{"id": "x"})
		if err := db.Store.InsertWebAuthnCredential(ctx, store.WebAuthnCredential{ID: "x", Credential: string(b)}); err != nil {
			t.Fatal(err)
		}
		if st, _ := f.svc.Status(ctx); st.SetupRequired || st.Passkeys != 1 {
			t.Fatalf("status after setup: %+v", st)
		}
	})
}
