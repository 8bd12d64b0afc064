package api

import (
	"net/http/httptest"
	"testing"
)

// TestBearerTokenRules pins the one header rule tokenOf and the device
// socket share, and their one difference: only tokenOf falls back to the
// WebSocket subprotocol, and only when there is no Authorization header.
func TestBearerTokenRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, auth, proto   string
		wantToken, wantHead string
	}{
		{"bearer", "Bearer tok", "", "tok", "tok"},
		{"scheme in any case", "bEaReR tok", "", "tok", "tok"},
		{"token trimmed", "Bearer   tok \t", "", "tok", "tok"},
		{"another scheme", "Basic dTpw", "bearer.tok", "", ""},
		{"no space", "Bearertok", "", "", ""},
		{"subprotocol only", "", "json, bearer.tok", "tok", ""},
		{"nothing", "", "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			if c.auth != "" {
				r.Header.Set("Authorization", c.auth)
			}
			if c.proto != "" {
				r.Header.Set("Sec-WebSocket-Protocol", c.proto)
			}
			if got := tokenOf(r); got != c.wantToken {
				t.Errorf("tokenOf = %q, want %q", got, c.wantToken)
			}
			if got := bearerHeader(r); got != c.wantHead {
				t.Errorf("bearerHeader = %q, want %q", got, c.wantHead)
			}
		})
	}
}
