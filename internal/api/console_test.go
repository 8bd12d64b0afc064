package api_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/console"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestConsoleMounted: the server answers the console at / with its own
// headers (CSP, a document that is revalidated), while an unknown API
// route still needs a credential and answers JSON.
func TestConsoleMounted(t *testing.T) {
	b := setup(t, storetest.New(t, "sqlite"))
	resp, err := http.Get(b.srv.URL + "/home/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	b.record(body)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Security-Policy") != console.CSP || resp.Header.Get("Cache-Control") != "no-cache" ||
		!strings.Contains(string(body), `<div id="app">`) {
		t.Fatalf("/home/ = %d %v %.100s", resp.StatusCode, resp.Header, body)
	}
	if status, body := b.do("GET", "/nope", nil, ""); status != http.StatusUnauthorized || !strings.Contains(string(body), `"code"`) {
		t.Fatalf("GET /api/v1/nope = %d %s", status, body)
	}
}
