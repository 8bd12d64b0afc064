package api_test

import (
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestSetupAndLoginOverHTTP(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		var st struct {
			SetupRequired, Authenticated bool
			CSRFToken                    string
			Passkeys                     int
			Branding                     map[string]string
		}
		status, body := b.do("GET", "/auth/status", nil, "")
		if err := json.Unmarshal(body, &st); err != nil || status != 200 || !st.SetupRequired || st.Authenticated || st.CSRFToken != "" ||
			st.Branding["agent"] != "aos" || st.Branding["productName"] != "Agent OS" || st.Branding["agentName"] != "Agent" {
			t.Fatalf("status before setup: %d %s", status, body)
		}
		// A wrong setup token: 401, and no state changes.
		if status, body := b.do("POST", "/auth/setup/begin", map[string]string{"setupToken": "aos_setup_nope"}, ""); status != 401 {
			t.Fatalf("setup with a wrong token: %d %s", status, body)
		}
		// Login before setup: 409.
		if status, _ := b.do("POST", "/auth/login", map[string]string{"password": ownerPassword, "totpCode": "123456"}, ""); status != 409 {
			t.Fatalf("login before setup: %d", status)
		}
		o := b.setUpOwner()
		// Setup is refused once done.
		if status, _ := b.do("POST", "/auth/setup/complete", map[string]string{"setupToken": "aos_setup_x", "password": ownerPassword, "totpCode": "123456"}, ""); status != 409 {
			t.Fatalf("setup again: %d", status)
		}
		status, body = b.doCookie("GET", "/auth/status", nil, o.sid, "")
		st.CSRFToken = ""
		if err := json.Unmarshal(body, &st); err != nil || st.SetupRequired || !st.Authenticated || st.CSRFToken != o.csrf {
			t.Fatalf("status with the session: %d %s", status, body)
		}
		// A wrong password or code: 401 with the same message.
		var msgs []string
		for _, req := range []map[string]string{
			{"password": "not the password", "totpCode": totpCode(o.totp, b.clk.Now().Add(30*time.Second))},
			{"password": ownerPassword, "totpCode": "000000"},
		} {
			status, body := b.do("POST", "/auth/login", req, "")
			if status != 401 {
				t.Fatalf("bad login: %d %s", status, body)
			}
			msgs = append(msgs, string(body))
		}
		if msgs[0] != msgs[1] {
			t.Fatalf("the refusals differ, hinting which part was wrong: %s / %s", msgs[0], msgs[1])
		}
		resp, body := b.login(o, nil)
		if resp.StatusCode != 200 || cookieOf(resp) == nil {
			t.Fatalf("login: %d %s", resp.StatusCode, body)
		}
		sid := cookieOf(resp).Value
		b.secret(sid)
		// Logout revokes the session and clears the cookie.
		resp, _ = b.send("POST", "/auth/logout", nil, b.sessionHeaders(sid, csrfOf(t, body)), true)
		if c := cookieOf(resp); resp.StatusCode != 204 || c == nil || c.MaxAge >= 0 {
			t.Fatalf("logout: %d %v", resp.StatusCode, resp.Header["Set-Cookie"])
		}
		if status, _ := b.doCookie("GET", "/missions", nil, sid, ""); status != 401 {
			t.Fatalf("after logout: %d", status)
		}
		// The audit log names the session, never a secret (scanned at cleanup).
		status, body = b.doCookie("GET", "/system/audit", nil, o.sid, "")
		for _, a := range []string{`"auth.setup"`, `"auth.login"`, `"auth.login.failure"`, `"auth.logout"`, `"session:`} {
			if status != 200 || !strings.Contains(string(body), a) {
				t.Fatalf("audit lacks %s: %s", a, body)
			}
		}
	})
}

func csrfOf(t *testing.T, body []byte) string {
	t.Helper()
	var lr struct{ CSRFToken string }
	if err := json.Unmarshal(body, &lr); err != nil || lr.CSRFToken == "" {
		t.Fatalf("no csrfToken in %s", body)
	}
	return lr.CSRFToken
}

// TestSessionCookieAttributes: plain HTTP gets aos_sid without Secure; TLS,
// and https through a trusted proxy, get __Host-aos_sid with Secure; an
// untrusted peer's X-Forwarded-Proto is ignored.
func TestSessionCookieAttributes(t *testing.T) {
	t.Parallel()
	local := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}
	for _, c := range []struct {
		name    string
		tls     bool
		proxies []netip.Prefix
		xfp     string
		cookie  string
		secure  bool
	}{
		{"plain http", false, nil, "", "aos_sid", false},
		{"tls", true, nil, "", "__Host-aos_sid", true},
		{"trusted proxy https", false, local, "https", "__Host-aos_sid", true},
		{"untrusted proxy https", false, nil, "https", "aos_sid", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := setup(t, storetest.New(t, "sqlite"), setupOpts{tls: c.tls, api: api.Options{TrustedProxies: c.proxies}})
			h := http.Header{}
			if c.xfp != "" {
				h.Set("X-Forwarded-Proto", c.xfp)
			}
			o := b.setUpOwner(h)
			k := o.cookie
			if k.Name != c.cookie || k.Secure != c.secure || !k.HttpOnly || k.SameSite != http.SameSiteStrictMode || k.Path != "/" || k.Domain != "" ||
				k.MaxAge != 14*24*3600 || len(k.Value) != 43 {
				t.Fatalf("cookie %+v", k)
			}
			// Both names are read.
			for _, name := range []string{"aos_sid", "__Host-aos_sid"} {
				resp, body := b.send("GET", "/missions", nil, http.Header{"Cookie": {name + "=" + o.sid}}, true)
				if resp.StatusCode != 200 {
					t.Fatalf("GET with cookie %s: %d %s", name, resp.StatusCode, body)
				}
			}
		})
	}
}

// TestCSRF: a cookie-authenticated mutation needs the session's CSRF token
// and, when it sends Origin, the public origin; refused ones change nothing.
func TestCSRF(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		o := b.setUpOwner()
		rule := map[string]any{"tool": "shell", "decision": "deny", "commandPrefix": "rm "}
		for _, c := range []struct {
			name         string
			csrf, origin string
		}{
			{"no token", "", ""},
			{"wrong token", strings.Repeat("x", len(o.csrf)), ""},
			{"another session's token", "AAAA" + o.csrf[4:], ""},
			{"foreign origin", o.csrf, "https://evil.example"},
		} {
			h := b.sessionHeaders(o.sid, c.csrf)
			if c.origin != "" {
				h.Set("Origin", c.origin)
			}
			resp, body := b.send("POST", "/policy/rules", rule, h, true)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `"csrf"`) {
				t.Fatalf("%s: %d %s, want 403 csrf", c.name, resp.StatusCode, body)
			}
		}
		var rules []mission.Rule
		b.ok("GET", "/policy/rules", nil, &rules)
		if len(rules) != 0 {
			t.Fatalf("a refused mutation changed state: %+v", rules)
		}
		h := b.sessionHeaders(o.sid, o.csrf)
		h.Set("Origin", b.origin)
		resp, body := b.send("POST", "/policy/rules", rule, h, true)
		if resp.StatusCode != 201 {
			t.Fatalf("with the right token and origin: %d %s", resp.StatusCode, body)
		}
		b.ok("GET", "/policy/rules", nil, &rules)
		if len(rules) != 1 {
			t.Fatalf("rules = %+v", rules)
		}
		// A GET needs no token; a login from a foreign origin is refused.
		if status, _ := b.doCookie("GET", "/policy/rules", nil, o.sid, ""); status != 200 {
			t.Fatalf("GET with cookie: %d", status)
		}
		resp, _ = b.send("POST", "/auth/login", map[string]string{"password": ownerPassword, "totpCode": "000000"}, http.Header{"Origin": {"https://evil.example"}}, true)
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("login from a foreign origin: %d", resp.StatusCode)
		}
	})
}

// TestLoginThrottleOverHTTP: failures lock the IP (told apart through a
// trusted proxy's X-Forwarded-For) and then the account, with 429 and
// Retry-After, and a locked request is refused even with the right
// credentials.
func TestLoginThrottleOverHTTP(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db, setupOpts{api: api.Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}})
		o := b.setUpOwner()
		from := func(ip string) http.Header { return http.Header{"X-Forwarded-For": {ip}} }
		bad := map[string]string{"password": "not the password", "totpCode": "000000"}
		for i := 0; i < 6; i++ {
			if resp, body := b.send("POST", "/auth/login", bad, from("192.0.2.1"), true); resp.StatusCode != 401 {
				t.Fatalf("failure %d: %d %s", i, resp.StatusCode, body)
			}
		}
		// (b.login moves the clock one TOTP step, 30 s, into the 60 s lock.)
		resp, body := b.login(o, from("192.0.2.1"))
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "30" || cookieOf(resp) != nil {
			t.Fatalf("locked IP: %d %s (Retry-After %q)", resp.StatusCode, body, resp.Header.Get("Retry-After"))
		}
		// Another IP still logs in: the lock was the IP's. That resets the
		// account's count; then failures spread over IPs lock the account.
		if resp, body := b.login(o, from("192.0.2.2")); resp.StatusCode != 200 {
			t.Fatalf("another IP: %d %s", resp.StatusCode, body)
		}
		for i := 0; i < 11; i++ {
			ip := netip.AddrFrom4([4]byte{198, 51, 100, byte(i)}).String()
			if resp, _ := b.send("POST", "/auth/login", bad, from(ip), true); resp.StatusCode != 401 {
				t.Fatalf("spread failure %d: %d", i, resp.StatusCode)
			}
		}
		resp, body = b.login(o, from("203.0.113.5"))
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("locked account: %d %s", resp.StatusCode, body)
		}
		// The lockout is in the database: a second server on it agrees.
		b2 := setup(t, db)
		b2.clk.Add(b.clk.Now().Sub(b2.clk.Now()))
		resp, _ = b2.send("POST", "/auth/login", bad, nil, true)
		if resp.StatusCode != 429 {
			t.Fatalf("another server on the same database: %d", resp.StatusCode)
		}
		b.clk.Add(time.Hour)
		if resp, body := b.login(o, from("203.0.113.5")); resp.StatusCode != 200 {
			t.Fatalf("after the lockout: %d %s", resp.StatusCode, body)
		}
	})
}

// TestSessionExpiryOverHTTP: a session unused for the idle timeout, or
// older than the absolute one, is refused.
func TestSessionExpiryOverHTTP(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		o := b.setUpOwner()
		b.clk.Add(23 * time.Hour)
		if status, _ := b.doCookie("GET", "/missions", nil, o.sid, ""); status != 200 {
			t.Fatalf("within the idle timeout: %d", status)
		}
		b.clk.Add(23 * time.Hour)
		if status, _ := b.doCookie("GET", "/missions", nil, o.sid, ""); status != 200 {
			t.Fatalf("used 23 h ago: %d", status)
		}
		b.clk.Add(24 * time.Hour)
		if status, _ := b.doCookie("GET", "/missions", nil, o.sid, ""); status != 401 {
			t.Fatalf("idle 24 h: %d, want 401", status)
		}
		resp, body := b.login(o, nil)
		sid := cookieOf(resp).Value
		b.secret(sid)
		_ = body
		for h := 12; h <= 14*24; h += 12 {
			b.clk.Add(12 * time.Hour)
			status, _ := b.doCookie("GET", "/missions", nil, sid, "")
			if want := map[bool]int{true: 401, false: 200}[h >= 14*24]; status != want {
				t.Fatalf("after %d h of use: %d, want %d", h, status, want)
			}
		}
	})
}

// TestTokenRoutes: API tokens are managed over the API with an owner
// session; an API token, even a write one, gets 403.
func TestTokenRoutes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		o := b.setUpOwner()
		for _, c := range []struct{ method, path string }{{"GET", "/tokens"}, {"POST", "/tokens"}, {"DELETE", "/tokens/x"}} {
			if status, _ := b.do(c.method, c.path, `{"name":"x","scopes":["read"]}`, b.write); status != 403 {
				t.Fatalf("%s %s with a write token: %d", c.method, c.path, status)
			}
		}
		resp, body := b.send("POST", "/tokens", map[string]any{"name": "ci", "scopes": []string{"read"}}, b.sessionHeaders(o.sid, o.csrf), false)
		var nt struct {
			ID, Name, Token string
			Scopes          []string
		}
		if err := json.Unmarshal(body, &nt); err != nil || resp.StatusCode != 201 || !strings.HasPrefix(nt.Token, "aos_") || nt.Name != "ci" {
			t.Fatalf("create: %d %s", resp.StatusCode, body)
		}
		b.secret(nt.Token)
		if status, _ := b.do("GET", "/missions", nil, nt.Token); status != 200 {
			t.Fatalf("the new token: %d", status)
		}
		// The owner scope cannot be given to a token.
		if status, _ := b.doCookie("POST", "/tokens", map[string]any{"name": "x", "scopes": []string{"owner"}}, o.sid, o.csrf); status != 400 {
			t.Fatalf("a token with the owner scope: %d", status)
		}
		status, body := b.doCookie("GET", "/tokens", nil, o.sid, "")
		if status != 200 || !strings.Contains(string(body), nt.ID) {
			t.Fatalf("list: %d %s", status, body)
		}
		if status, body := b.doCookie("DELETE", "/tokens/"+nt.ID, nil, o.sid, o.csrf); status != 204 {
			t.Fatalf("revoke: %d %s", status, body)
		}
		if status, _ := b.do("GET", "/missions", nil, nt.Token); status != 401 {
			t.Fatalf("the revoked token: %d", status)
		}
		if status, _ := b.doCookie("DELETE", "/tokens/"+nt.ID, nil, o.sid, o.csrf); status != 404 {
			t.Fatalf("revoke twice: %d", status)
		}
		status, body = b.doCookie("GET", "/system/audit", nil, o.sid, "")
		if status != 200 || !strings.Contains(string(body), `"token.create"`) || !strings.Contains(string(body), `"token.revoke"`) ||
			!strings.Contains(string(body), `"actor":"session:`) {
			t.Fatalf("audit: %s", body)
		}
	})
}
