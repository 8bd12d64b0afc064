package cli

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/worker"
)

// startServer runs `aos server args...` until the test ends and returns
// its API base URL and its output so far; the server reads getenv as its
// environment.
func startServer(t *testing.T, getenv func(string) string, args ...string) (string, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	srv := NewServerCmd("v-test")
	out := &syncBuffer{}
	srv.SetOut(out)
	srv.SetArgs(args)
	done := make(chan error, 1)
	go func() { done <- srv.ExecuteContext(withEnv(ctx, getenv)) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	re := regexp.MustCompile(`https?://\S+/api/v1`)
	deadline := time.Now().Add(10 * time.Second)
	for re.FindString(out.String()) == "" {
		if time.Now().After(deadline) {
			t.Fatalf("server printed no URL: %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return re.FindString(out.String()), out
}

// TestServerPrintsSetupToken: on first run aos server prints a setup token
// (to its output, not the JSON log) that setup accepts; with
// --no-setup-token (as aos up starts it) it prints none; the key file is
// created 0600.
func TestServerPrintsSetupToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	getenv := mapEnv(map[string]string{"AOS_DATA_DIR": dir + "/data", "AOS_WORKSPACE_ROOT": dir + "/ws", "XDG_CONFIG_HOME": dir + "/config",
		"AOS_ADDR": "127.0.0.1:0", "AOS_LOG_LEVEL": "debug"})

	quietBase, quiet := startServer(t, getenv, "--no-setup-token")
	// The server answers only once it is past its banner, so after a
	// health response a missing token is not just a token not printed yet.
	resp, err := http.Get(quietBase + "/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if strings.Contains(quiet.String(), "aos_setup_") {
		t.Fatalf("--no-setup-token printed a token:\n%s", quiet.String())
	}
	base, out := startServer(t, getenv)
	// The banner comes after the URL: wait for it (the URL line alone
	// raced it on a loaded CI machine).
	tokRe := regexp.MustCompile(`setup token: (aos_setup_\S+)`)
	var tok []string
	for deadline := time.Now().Add(10 * time.Second); tok == nil; tok = tokRe.FindStringSubmatch(out.String()) {
		if time.Now().After(deadline) {
			t.Fatalf("no setup token printed:\n%s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if want := "aos setup --server " + strings.TrimSuffix(base, "/api/v1"); !strings.Contains(out.String(), want) {
		t.Fatalf("the first-run banner does not say %q:\n%s", want, out.String())
	}
	resp, err = http.Post(base+"/auth/setup/begin", "application/json", strings.NewReader(`{"setupToken":"`+tok[1]+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("setup begin with the printed token: %d", resp.StatusCode)
	}
}

// TestUpBanner: aos up's banner names aos setup --server URL (with the
// setup token) while the owner is to be created, and aos login --server
// URL (without a token) afterwards.
func TestUpBanner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, err := config.FromEnv(mapEnv(map[string]string{"AOS_DATA_DIR": dir + "/data", "AOS_WORKSPACE_ROOT": dir + "/ws"}))
	if err != nil {
		t.Fatal(err)
	}
	const addr = "127.0.0.1:8640"
	var first strings.Builder
	if err := upSetupToken(t.Context(), &first, cfg, addr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first.String(), "aos setup --server http://"+addr) || !strings.Contains(first.String(), "setup token: aos_setup_") {
		t.Fatalf("first run:\n%s", first.String())
	}

	// Create the owner on the same database, as aos setup would.
	st, err := worker.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := newAuth(cfg, st, slog.New(slog.DiscardHandler), publicOrigin(cfg.Getenv, addr))
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := a.IssueSetupToken(t.Context(), "test")
	if err != nil {
		t.Fatal(err)
	}
	sec, err := a.BeginSetup(t.Context(), ipLoopback, tok)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.CompleteSetup(t.Context(), ipLoopback, tok, ownerPassword, totpAt(t, sec.TOTPSecret, time.Now())); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	var later strings.Builder
	if err := upSetupToken(t.Context(), &later, cfg, addr); err != nil {
		t.Fatal(err)
	}
	if got := later.String(); !strings.Contains(got, "aos login --server http://"+addr) || strings.Contains(got, "aos_setup_") {
		t.Fatalf("after setup:\n%s", got)
	}
}
