package api_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/api"
)

const ownerPassword = "a long enough passphrase"

// totpCode is RFC 6238's 6-digit code of secret (base32) at t.
func totpCode(secret string, t time.Time) string {
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(secret)
	if err != nil {
		panic(err)
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(t.Unix()/30))
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	return fmt.Sprintf("%06d", (binary.BigEndian.Uint32(sum[off:off+4])&0x7fffffff)%1_000_000)
}

// send sends a request with extra headers and returns the response (its
// body read) and the body. record says whether the body is scanned for
// secrets (false only where a secret is shown once by design).
func (b *bundle) send(method, path string, body any, hdr http.Header, record bool) (*http.Response, []byte) {
	b.t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(v)
	case []byte:
		rd = bytes.NewReader(v)
	default:
		j, err := json.Marshal(v)
		if err != nil {
			b.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, b.srv.URL+api.Prefix+path, rd)
	if err != nil {
		b.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	resp, err := b.srv.Client().Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	if record {
		b.record(out)
	}
	return resp, out
}

// cookieName is the session cookie this bundle's server sets.
func (b *bundle) cookieName() string {
	if strings.HasPrefix(b.srv.URL, "https") {
		return "__Host-aos_sid"
	}
	return "aos_sid"
}

// sessionHeaders are the headers of a cookie-authenticated request.
func (b *bundle) sessionHeaders(sid, csrf string) http.Header {
	h := http.Header{"Cookie": {b.cookieName() + "=" + sid}}
	if csrf != "" {
		h.Set("X-CSRF-Token", csrf)
	}
	return h
}

// doCookie sends a request authenticated by the session cookie.
func (b *bundle) doCookie(method, path string, body any, sid, csrf string) (int, []byte) {
	b.t.Helper()
	resp, out := b.send(method, path, body, b.sessionHeaders(sid, csrf), true)
	return resp.StatusCode, out
}

// owner is an owner set up over the API, with a session.
type owner struct {
	totp   string // base32
	sid    string // the session cookie's value
	csrf   string
	cookie *http.Cookie
}

// cookieOf returns the session cookie resp sets.
func cookieOf(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == "aos_sid" || c.Name == "__Host-aos_sid" {
			return c
		}
	}
	return nil
}

// setUpOwner runs first-run setup over the API with hdr added to each
// request, and returns the owner.
func (b *bundle) setUpOwner(hdr ...http.Header) owner {
	b.t.Helper()
	h := http.Header{}
	if len(hdr) > 0 {
		h = hdr[0]
	}
	tok, _, err := b.auth.IssueSetupToken(context.Background(), "test")
	if err != nil {
		b.t.Fatal(err)
	}
	b.secret(tok, ownerPassword)
	resp, out := b.send("POST", "/auth/setup/begin", map[string]string{"setupToken": tok}, h, false)
	var sec struct{ TOTPSecret, OTPAuthURL string }
	if err := json.Unmarshal(out, &sec); err != nil || resp.StatusCode != 200 || sec.TOTPSecret == "" {
		b.t.Fatalf("setup begin: %d %s", resp.StatusCode, out)
	}
	b.secret(sec.TOTPSecret)
	resp, out = b.send("POST", "/auth/setup/complete", map[string]string{"setupToken": tok, "password": ownerPassword, "totpCode": totpCode(sec.TOTPSecret, b.clk.Now())}, h, true)
	var lr struct{ CSRFToken string }
	c := cookieOf(resp)
	if err := json.Unmarshal(out, &lr); err != nil || resp.StatusCode != 200 || lr.CSRFToken == "" || c == nil {
		b.t.Fatalf("setup complete: %d %s", resp.StatusCode, out)
	}
	b.secret(c.Value)
	return owner{totp: sec.TOTPSecret, sid: c.Value, csrf: lr.CSRFToken, cookie: c}
}

// login logs the owner in with the next TOTP step's code (a used code is
// refused), moving the clock on by one step.
func (b *bundle) login(o owner, hdr http.Header) (*http.Response, []byte) {
	b.t.Helper()
	b.clk.Add(30 * time.Second)
	return b.send("POST", "/auth/login", map[string]string{"password": ownerPassword, "totpCode": totpCode(o.totp, b.clk.Now())}, hdr, true)
}
