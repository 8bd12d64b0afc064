package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe to write from the command while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServerAndTokenCommands: aos token create mints a token on the
// database, aos server serves the API with it, and aos token revoke shuts
// it out; Ctrl-C (the context) stops the server cleanly.
func TestServerAndTokenCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	getenv := mapEnv(map[string]string{"AOS_DATA_DIR": dir + "/data", "AOS_WORKSPACE_ROOT": dir + "/ws", "XDG_CONFIG_HOME": dir + "/config",
		"AOS_ADDR": "127.0.0.1:0", "AOS_LOG_LEVEL": "error"})

	run := func(args ...string) string {
		t.Helper()
		cmd := NewTokenCmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(io.Discard)
		cmd.SetArgs(args)
		if err := cmd.ExecuteContext(withEnv(context.Background(), getenv)); err != nil {
			t.Fatalf("token %v: %v", args, err)
		}
		return out.String()
	}
	secret := strings.TrimSpace(run("create", "--name", "test", "--scope", "read"))
	if !strings.HasPrefix(secret, "aos_") {
		t.Fatalf("token create printed %q", secret)
	}
	ls := run("ls")
	if !strings.Contains(ls, "test") || strings.Contains(ls, secret[4:]) {
		t.Fatalf("token ls:\n%s", ls)
	}
	id := regexp.MustCompile(`tok_[0-9a-f]+`).FindString(ls)

	base, _ := startServer(t, getenv)
	get := func(path, tok string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if s := get("/health", ""); s != 200 {
		t.Fatalf("health: %d", s)
	}
	if s := get("/missions", secret); s != 200 {
		t.Fatalf("missions with token: %d", s)
	}
	run("revoke", id)
	if s := get("/missions", secret); s != 401 {
		t.Fatalf("missions with a revoked token: %d", s)
	}
}
