package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/client"
)

func TestParseServer(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"http://127.0.0.1:8640", "http://127.0.0.1:8640", true},
		{"https://aos.example.com/", "https://aos.example.com", true},
		{" https://aos.example.com/base/ ", "https://aos.example.com/base", true},
		{"ftp://x", "", false},
		{"127.0.0.1:8640", "", false},
		{"http://user:secret@host", "", false},
		{"http://host/?q=1", "", false},
		{"http://host/#f", "", false},
		{"", "", false},
	}
	for _, tc := range tests {
		u, err := client.ParseServer(tc.in)
		if tc.ok != (err == nil) || tc.ok && u.String() != tc.want {
			t.Errorf("ParseServer(%q) = %v, %v; want %q ok=%v", tc.in, u, err, tc.want, tc.ok)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("ParseServer(%q) error shows the password: %v", tc.in, err)
		}
	}
}

// TestErrorsAndRedirects: an error body becomes *client.Error with its
// status, code and message; a body that is not the API's becomes
// bad_response; a redirect is not followed, so the token never goes to
// another host.
func TestErrorsAndRedirects(t *testing.T) {
	const token = "aos_secret-token"
	var elsewhere bool
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { elsewhere = true }))
	t.Cleanup(other.Close)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			t.Errorf("no bearer token on %s", r.URL.Path)
		}
		switch r.URL.Path {
		case "/api/v1/missions/x":
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":"no mission x"}}`))
		case "/api/v1/spend":
			w.WriteHeader(502)
			_, _ = w.Write([]byte(`<html>bad gateway</html>`))
		case "/api/v1/models":
			http.Redirect(w, r, other.URL+"/steal", http.StatusFound)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, token, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = c.GetMission(ctx, "x")
	if ce, ok := client.AsError(err); !ok || ce.Status != 404 || ce.Code != "not_found" || ce.Message != "no mission x" || !ce.IsNotFound() {
		t.Fatalf("GetMission: %#v", err)
	}
	_, err = c.Spend(ctx)
	if ce, ok := client.AsError(err); !ok || ce.Status != 502 || ce.Code != client.CodeBadResponse {
		t.Fatalf("Spend: %#v", err)
	}
	_, err = c.Models(ctx)
	if ce, ok := client.AsError(err); !ok || ce.Status != http.StatusFound || elsewhere {
		t.Fatalf("Models: %#v (followed: %v)", err, elsewhere)
	}
	srv.Close()
	_, err = c.Status(ctx)
	var ue *client.UnreachableError
	if !errors.As(err, &ue) || strings.Contains(err.Error(), token) {
		t.Fatalf("Status on a closed server: %v", err)
	}
}
