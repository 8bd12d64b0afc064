package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

// publicRoutes are the only routes served without a credential.
var publicRoutes = map[string]bool{
	"GET /health": true, "GET /auth/status": true, "POST /auth/setup/begin": true, "POST /auth/setup/complete": true,
	"POST /auth/login": true, "POST /auth/webauthn/login/begin": true, "POST /auth/webauthn/login/finish": true,
	"POST /device/pair": true,
}

// TestEveryRouteNeedsToken iterates the route table, so a new route cannot
// be forgotten: every route but the public ones answers 401 without a
// token, with a malformed one, with an unknown one and with a revoked one,
// and with an unknown or revoked session cookie. Owner routes refuse any
// API token (403).
func TestEveryRouteNeedsToken(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.New(t, "sqlite"))
	ctx := context.Background()
	revoked, err := b.svc.CreateToken(ctx, "test", "gone", []string{"write"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.svc.RevokeToken(ctx, "test", revoked.ID); err != nil {
		t.Fatal(err)
	}
	unknown := "aos_" + strings.Repeat("A", len(b.write)-4)
	o := b.setUpOwner()
	revokedSession, csrfRevoked := o.sid, o.csrf
	if status, body := b.doCookie("POST", "/auth/logout", nil, o.sid, o.csrf); status != http.StatusNoContent {
		t.Fatalf("logout: %d %s", status, body)
	}
	public := 0
	for _, rt := range b.api.Routes() {
		path := strings.ReplaceAll(strings.ReplaceAll(rt.Pattern, "{id}", "x"), "{", "")
		if rt.Public {
			public++
			if !publicRoutes[rt.Method+" "+rt.Pattern] {
				t.Errorf("%s %s is public; only %v may be", rt.Method, rt.Pattern, publicRoutes)
			}
			continue
		}
		for name, sid := range map[string]string{"unknown": strings.Repeat("A", 43), "revoked": revokedSession} {
			status, body := b.doCookie(rt.Method, path, "{}", sid, csrfRevoked)
			if status != http.StatusUnauthorized || !strings.Contains(string(body), `"unauthorized"`) {
				t.Errorf("%s %s with a %s session: %d %s, want 401", rt.Method, rt.Pattern, name, status, body)
			}
		}
		if rt.Scope == mission.ScopeOwner {
			if status, _ := b.do(rt.Method, path, "{}", b.write); status != http.StatusForbidden {
				t.Errorf("%s %s with a write token: %d, want 403", rt.Method, rt.Pattern, status)
			}
		}
		for name, tok := range map[string]string{"none": "", "malformed": "Bearer-ish", "unknown": unknown, "revoked": revoked.Secret} {
			status, body := b.do(rt.Method, path, "{}", tok)
			if status != http.StatusUnauthorized || !strings.Contains(string(body), `"unauthorized"`) {
				t.Errorf("%s %s with %s token: %d %s, want 401", rt.Method, rt.Pattern, name, status, body)
			}
		}
		// The write scope is required for mutations, except that any token
		// may revoke itself (checked below with a token of its own).
		if rt.Method != "GET" && rt.Pattern != "/tokens/current" {
			status, _ := b.do(rt.Method, path, "{}", b.read)
			if status != http.StatusForbidden {
				t.Errorf("%s %s with a read token: %d, want 403", rt.Method, rt.Pattern, status)
			}
		}
	}
	// Any token may revoke itself, a read token too; then it is refused.
	self, err := b.svc.CreateToken(context.Background(), "test", "self", []string{mission.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	if status, body := b.do("DELETE", "/tokens/current", nil, self.Secret); status != http.StatusNoContent {
		t.Errorf("DELETE /tokens/current with its own read token: %d %s", status, body)
	}
	if status, _ := b.do("GET", "/missions", nil, self.Secret); status != http.StatusUnauthorized {
		t.Errorf("a self-revoked token still works: %d", status)
	}
	if public != len(publicRoutes) {
		t.Errorf("%d public routes, want %d", public, len(publicRoutes))
	}
	// Unknown paths under the prefix are not probed anonymously either.
	if status, _ := b.do("GET", "/no/such/route", nil, ""); status != http.StatusUnauthorized {
		t.Errorf("unknown route without token: %d, want 401", status)
	}
	if status, _ := b.do("GET", "/no/such/route", nil, b.read); status != http.StatusNotFound {
		t.Errorf("unknown route with token: %d, want 404", status)
	}
}

func TestHealthIsPublic(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.New(t, "sqlite"))
	status, body := b.do("GET", "/health", nil, "")
	var h struct {
		OK      bool
		Version string
		Agent   string
	}
	if err := json.Unmarshal(body, &h); err != nil || status != 200 || !h.OK || h.Agent != "aos" || h.Version != "test" {
		t.Fatalf("health: %d %s", status, body)
	}
}
