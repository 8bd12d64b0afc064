package api_test

import (
	"context"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aos-run/aos/internal/store/storetest"
)

// TestCloneRefusesNonPublicTargets: by default a clone may not reach this
// machine or a private network (a token holder could otherwise probe the
// owner's network through git's error messages). Each refusal is a 400
// before git runs, says nothing of the address, and leaves nothing on disk.
func TestCloneRefusesNonPublicTargets(t *testing.T) {
	t.Parallel()
	gs := startGitServer(t, map[string]map[string]string{"app": {"a.txt": "a\n"}})
	u, _ := url.Parse(gs.URL)
	hosts := map[string][]netip.Addr{
		"intranet.test": {netip.MustParseAddr("10.1.2.3")},
		"metadata.test": {netip.MustParseAddr("169.254.169.254")},
		"mixed.test":    {netip.MustParseAddr("93.184.215.14"), netip.MustParseAddr("127.0.0.1")},
		"cgnat.test":    {netip.MustParseAddr("100.64.1.1")},
		"v6local.test":  {netip.MustParseAddr("fd00::1")},
	}
	lookup := func(_ context.Context, h string) ([]netip.Addr, error) {
		if a, ok := hosts[h]; ok {
			return a, nil
		}
		return nil, errors.New("no such host")
	}
	b := setup(t, storetest.New(t, "sqlite"), setupOpts{gitEnv: gs.GitEnv, publicOnly: true, lookup: lookup})
	for i, raw := range []string{
		gs.URL + "/app.git", // loopback, the live server
		"https://intranet.test/app.git",
		"https://metadata.test/latest",
		"https://mixed.test/app.git",
		"ssh://git@cgnat.test/app.git",
		"git@v6local.test:app.git",
		"https://0.0.0.0:" + u.Port() + "/app.git",
	} {
		path := "c" + string(rune('a'+i))
		code, body := b.do("POST", "/projects", map[string]any{"name": "x", "path": path, "mode": "clone", "url": raw}, b.write)
		if code != 400 || !strings.Contains(string(body), "private network") {
			t.Errorf("%s: %d %s", raw, code, body)
		}
		for _, leak := range []string{"10.1.2.3", "169.254", "127.0.0.1", "100.64", "fd00"} {
			if strings.Contains(string(body), leak) && !strings.Contains(raw, leak) {
				t.Errorf("%s: the refusal names an address: %s", raw, body)
			}
		}
		if exists(filepath.Join(b.root, path)) {
			t.Errorf("%s: a directory was left", raw)
		}
	}
	if got := entries(t, b.root); got != "" {
		t.Fatalf("the workspace root holds %q", got)
	}
}

// TestClonePinsTheCheckedAddress: the clone connects to the address aos
// checked, not to whatever the name resolves to when git looks it up
// again. The server's certificate is valid for example.com; the test's
// resolver points example.com at the local server, which the system
// resolver would not, so the clone succeeds only if git used the pinned
// address.
func TestClonePinsTheCheckedAddress(t *testing.T) {
	t.Parallel()
	gs := startGitServer(t, map[string]map[string]string{"app": {"a.txt": "pinned\n"}})
	u, _ := url.Parse(gs.URL)
	lookup := func(_ context.Context, h string) ([]netip.Addr, error) {
		if h == "example.com" {
			return []netip.Addr{netip.MustParseAddr(u.Hostname())}, nil
		}
		return nil, errors.New("no such host")
	}
	b := setup(t, storetest.New(t, "sqlite"), setupOpts{gitEnv: gs.GitEnv, lookup: lookup})
	b.ok("POST", "/projects", map[string]any{"name": "p", "path": "pinned", "mode": "clone", "url": "https://example.com:" + u.Port() + "/app.git"}, nil)
	if got := gitT(t, filepath.Join(b.root, "pinned"), "show", "HEAD:a.txt"); got != "pinned\n" {
		t.Fatalf("cloned a.txt = %q", got)
	}
}

// TestCloneDoesNotFollowRedirects: a clone URL whose server redirects
// elsewhere is refused rather than followed, since the redirect's target
// was never checked (it could be a private address) nor pinned.
func TestCloneDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	gs := startGitServer(t, map[string]map[string]string{"app": {"a.txt": "a\n"}})
	var hops atomic.Int32
	redirect := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hops.Add(1)
		http.Redirect(w, r, gs.URL+r.URL.RequestURI(), http.StatusFound)
	}))
	t.Cleanup(redirect.Close)
	ca := filepath.Join(t.TempDir(), "both.pem")
	pems := append(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: redirect.Certificate().Raw}), caOf(t, gs)...)
	if err := os.WriteFile(ca, pems, 0o644); err != nil {
		t.Fatal(err)
	}
	b := setup(t, storetest.New(t, "sqlite"), setupOpts{gitEnv: []string{"GIT_SSL_CAINFO=" + ca}})
	// Positive control: the same trust reaches the real server directly.
	b.ok("POST", "/projects", map[string]any{"name": "direct", "path": "direct", "mode": "clone", "url": gs.URL + "/app.git"}, nil)
	code, body := b.do("POST", "/projects", map[string]any{"name": "r", "path": "redirected", "mode": "clone", "url": redirect.URL + "/app.git"}, b.write)
	if code != 502 || hops.Load() == 0 {
		t.Fatalf("clone through a redirect: %d %s (%d requests to the redirector)", code, body, hops.Load())
	}
	if exists(filepath.Join(b.root, "redirected")) {
		t.Fatal("a refused clone left its directory")
	}
}

// caOf reads the PEM file gs's GitEnv points git at.
func caOf(t *testing.T, gs *gitServer) []byte {
	t.Helper()
	for _, e := range gs.GitEnv {
		if f, ok := strings.CutPrefix(e, "GIT_SSL_CAINFO="); ok {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Fatal("the git server has no CA file")
	return nil
}
