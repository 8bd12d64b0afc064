package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/store/storetest"
)

// TestEveryRouteNeedsToken iterates the route table, so a new route cannot
// be forgotten: every route but /health answers 401 without a token, with
// a malformed one, with an unknown one and with a revoked one.
func TestEveryRouteNeedsToken(t *testing.T) {
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
	public := 0
	for _, rt := range b.api.Routes() {
		path := strings.ReplaceAll(strings.ReplaceAll(rt.Pattern, "{id}", "x"), "{", "")
		if rt.Public {
			public++
			if rt.Method != "GET" || rt.Pattern != "/health" {
				t.Errorf("%s %s is public; only GET /health may be", rt.Method, rt.Pattern)
			}
			continue
		}
		for name, tok := range map[string]string{"none": "", "malformed": "Bearer-ish", "unknown": unknown, "revoked": revoked.Secret} {
			status, body := b.do(rt.Method, path, "{}", tok)
			if status != http.StatusUnauthorized || !strings.Contains(string(body), `"unauthorized"`) {
				t.Errorf("%s %s with %s token: %d %s, want 401", rt.Method, rt.Pattern, name, status, body)
			}
		}
		// The write scope is required for mutations.
		if rt.Method != "GET" {
			status, _ := b.do(rt.Method, path, "{}", b.read)
			if status != http.StatusForbidden {
				t.Errorf("%s %s with a read token: %d, want 403", rt.Method, rt.Pattern, status)
			}
		}
	}
	if public != 1 {
		t.Errorf("%d public routes, want 1", public)
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
