package console_test

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/console"
)

func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec
}

// TestHeaders: every answer carries the strict CSP, nosniff and the
// referrer policy; documents are revalidated, hashed assets are immutable.
func TestHeaders(t *testing.T) {
	t.Parallel()
	h := console.Handler()
	home := get(t, h, "GET", "/home/")
	if home.Code != 200 || !strings.Contains(home.Body.String(), `<div id="app">`) {
		t.Fatalf("/home/ = %d %q", home.Code, home.Body.String())
	}
	asset := regexp.MustCompile(`/assets/[A-Za-z0-9_-]+\.js`).FindString(home.Body.String())
	if asset == "" {
		t.Fatal("index.html names no hashed script")
	}
	if s := regexp.MustCompile(`<script(?:[^>]*)>[^<]+</script>`).FindString(home.Body.String()); s != "" {
		t.Fatalf("inline script in index.html: %s", s)
	}
	tests := []struct {
		path, cache string
		status      int
	}{
		{"/home/", "no-cache", 200},
		{"/missions/", "no-cache", 200},
		{"/mission/?id=x", "no-cache", 200},
		{"/approvals/", "no-cache", 200},
		{"/login/", "no-cache", 200},
		{asset, "public, max-age=31536000, immutable", 200},
		{"/icon.svg", "no-cache", 200},
		{"/", "no-store", 302},
		{"/home", "no-store", 301},
		{"/nope/", "no-store", 404},
		{"/assets/nope.js", "no-store", 404},
		{"/assets/", "no-store", 404},
		{"/index.html", "no-store", 404},
		{"/../../go.mod", "no-store", 404},
	}
	for _, tc := range tests {
		rec := get(t, h, "GET", tc.path)
		if rec.Code != tc.status {
			t.Errorf("%s = %d, want %d", tc.path, rec.Code, tc.status)
		}
		hd := rec.Header()
		if got := hd.Get("Cache-Control"); got != tc.cache {
			t.Errorf("%s Cache-Control = %q, want %q", tc.path, got, tc.cache)
		}
		if hd.Get("Content-Security-Policy") != console.CSP || hd.Get("X-Content-Type-Options") != "nosniff" || hd.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("%s: security headers %v", tc.path, hd)
		}
	}
	if loc := get(t, h, "GET", "/home?x=1").Header().Get("Location"); loc != "/home/?x=1" {
		t.Errorf("/home?x=1 redirects to %q", loc)
	}
	if rec := get(t, h, "POST", "/home/"); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /home/ = %d", rec.Code)
	}
	for path, want := range map[string]string{asset: "text/javascript", "/sw.js": "text/javascript", "/manifest.webmanifest": "application/manifest+json", "/icon.svg": "image/svg+xml"} {
		rec := get(t, h, "GET", path)
		if ct := rec.Header().Get("Content-Type"); rec.Code != 200 || !strings.HasPrefix(ct, want) {
			t.Errorf("%s = %d, Content-Type %q, want %q", path, rec.Code, ct, want)
		}
	}
	if !strings.Contains(get(t, h, "GET", "/manifest.webmanifest").Body.String(), `"name": "Agent OS"`) {
		t.Error("the manifest does not name Agent OS")
	}
}

// TestCSP: the policy allows nothing inline, nothing remote, no framing.
func TestCSP(t *testing.T) {
	t.Parallel()
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'",
		"frame-ancestors 'none'", "base-uri 'none'", "form-action 'self'", "object-src 'none'"} {
		if !strings.Contains(console.CSP, want+";") && !strings.HasSuffix(console.CSP, want) {
			t.Errorf("CSP lacks %q: %s", want, console.CSP)
		}
	}
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*"} {
		if strings.Contains(console.CSP, bad) {
			t.Errorf("CSP allows %q: %s", bad, console.CSP)
		}
	}
}
