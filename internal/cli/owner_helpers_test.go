package cli

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/api"
)

// ipLoopback is the address the test's requests come from.
var ipLoopback = netip.MustParseAddr("127.0.0.1")

// ownerPassword is the owner's password in these tests.
const ownerPassword = "correct horse battery staple"

// totpAt is RFC 6238's code of the base32 secret at now: HMAC-SHA1 of the
// 30-second step, dynamically truncated to 6 digits. It is written here
// from the RFC, not taken from internal/auth, so that the test checks the
// server against the standard.
func totpAt(t *testing.T, secret string, now time.Time) string {
	t.Helper()
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(secret))
	if err != nil {
		t.Fatalf("decode the TOTP secret: %v", err)
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(now.Unix()/30))
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	v := binary.BigEndian.Uint32(sum[off:off+4]) & 0x7fffffff
	return fmt.Sprintf("%06d", v%1_000_000)
}

// wrongCode returns a 6-digit code that is not right.
func wrongCode(right string) string {
	if right == "000000" {
		return "111111"
	}
	return "000000"
}

// setUpOwner completes the owner setup through the auth service and
// returns the TOTP secret; the clock is then moved to the next step, so
// the next code is fresh.
func (r *remote) setUpOwner() string {
	r.t.Helper()
	ctx := r.t.Context()
	ip := ipLoopback
	tok, _, err := r.auth.IssueSetupToken(ctx, "test")
	if err != nil {
		r.t.Fatal(err)
	}
	sec, err := r.auth.BeginSetup(ctx, ip, tok)
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.auth.CompleteSetup(ctx, ip, tok, ownerPassword, totpAt(r.t, sec.TOTPSecret, r.clk.Now())); err != nil {
		r.t.Fatal(err)
	}
	r.clk.Add(30 * time.Second)
	return sec.TOTPSecret
}

// lines is a stdin whose lines are made when they are read, so that a
// line can depend on what the command printed before (a TOTP code of the
// secret it showed).
type lines struct {
	next []func() string
	buf  []byte
}

func (l *lines) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		if len(l.next) == 0 {
			return 0, io.EOF
		}
		l.buf = []byte(l.next[0]() + "\n")
		l.next = l.next[1:]
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// terminal returns a client environment on a terminal: readSecret answers
// secrets in turn (then EOF), stdin is in; nothing from r.env, so only the
// stored credentials count. The transport records session cookies.
func (r *remote) terminal(in io.Reader, jar *cookieLog, secrets ...string) *clientEnv {
	var mu sync.Mutex
	e := &clientEnv{
		getenv:    func(string) string { return "" },
		configDir: func() (string, error) { return r.cfg, nil },
		hostname:  func() (string, error) { return "testhost", nil },
		stdin:     in,
		tty:       true,
		readSecret: func() (string, error) {
			mu.Lock()
			defer mu.Unlock()
			if len(secrets) == 0 {
				return "", io.EOF
			}
			s := secrets[0]
			secrets = secrets[1:]
			return s, nil
		},
		followBackoff: 20 * time.Millisecond,
	}
	if jar != nil {
		e.transport = jar
	}
	return e
}

// cookieLog is a transport that records the session cookies the server
// sets.
type cookieLog struct {
	mu   sync.Mutex
	sids []string // guarded by mu
}

func (c *cookieLog) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		for _, ck := range resp.Cookies() {
			if strings.HasSuffix(ck.Name, "aos_sid") && ck.Value != "" {
				c.mu.Lock()
				c.sids = append(c.sids, ck.Value)
				c.mu.Unlock()
			}
		}
	}
	return resp, err
}

func (c *cookieLog) sessions() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sids...)
}

// sessionLive asks GET /auth/status whether sid is a live session.
func (r *remote) sessionLive(sid string) bool {
	r.t.Helper()
	req, err := http.NewRequest(http.MethodGet, r.srv.URL+api.Prefix+"/auth/status", nil)
	if err != nil {
		r.t.Fatal(err)
	}
	req.AddCookie(&http.Cookie{Name: "aos_sid", Value: sid})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	var st api.AuthStatus
	if resp.StatusCode != http.StatusOK {
		r.t.Fatalf("GET /auth/status: %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		r.t.Fatal(err)
	}
	return st.Authenticated
}

// credFile returns the stored credentials file's mode, or false when there
// is none.
func (r *remote) credFile() (os.FileMode, bool) {
	r.t.Helper()
	fi, err := os.Stat(filepath.Join(r.cfg, "aos", "credentials.json"))
	if os.IsNotExist(err) {
		return 0, false
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return fi.Mode().Perm(), true
}

// noSecrets fails if text holds any of secrets.
func noSecrets(t *testing.T, what, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Fatalf("%s printed a secret (%.12s…):\n%s", what, s, text)
		}
	}
}
