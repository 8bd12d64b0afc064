package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aos-run/aos/internal/client"
)

// contractServer speaks the agreed shapes of the routes being built in
// parallel (POST /auth/login, POST /tokens, POST /auth/logout, GET and
// POST /projects), and checks what the client sends. The real routes
// replace it in the end-to-end test after the merge.
type contractServer struct {
	t        *testing.T
	mu       sync.Mutex
	calls    []string // guarded by mu
	projects []client.Project
}

const (
	contractPassword = "correct horse"
	contractTOTP     = "123456"
	contractSession  = "sess-secret-1"
	contractCSRF     = "csrf-1"
	contractToken    = "aos_minted-secret"
)

func (s *contractServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.calls = append(s.calls, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	session := func() bool {
		c, err := r.Cookie("aos_sid")
		return err == nil && c.Value == contractSession && r.Header.Get("X-CSRF-Token") == contractCSRF
	}
	bearer := r.Header.Get("Authorization") == "Bearer "+contractToken
	fail := func(status int, code string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error":{"code":"` + code + `","message":"refused"}}`))
	}
	reply := func(status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	switch r.Method + " " + r.URL.Path {
	case "POST /api/v1/auth/login":
		var req struct {
			Password string `json:"password"`
			TOTPCode string `json:"totpCode"`
		}
		if json.NewDecoder(r.Body).Decode(&req) != nil || req.Password != contractPassword || req.TOTPCode != contractTOTP {
			fail(401, "unauthorized")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: "aos_sid", Value: contractSession, HttpOnly: true, Path: "/"})
		reply(200, map[string]string{"csrfToken": contractCSRF})
	case "POST /api/v1/tokens":
		var req client.CreateTokenRequest
		if !session() || json.NewDecoder(r.Body).Decode(&req) != nil || req.Name != "cli@testhost" || strings.Join(req.Scopes, ",") != "read,write" {
			fail(403, "forbidden")
			return
		}
		reply(201, map[string]any{"id": "tok_1", "name": req.Name, "scopes": req.Scopes, "token": contractToken, "createdAt": 1})
	case "POST /api/v1/auth/logout":
		if !session() {
			fail(401, "unauthorized")
			return
		}
		w.WriteHeader(204)
	case "GET /api/v1/system/status":
		if !bearer {
			fail(401, "unauthorized")
			return
		}
		reply(200, map[string]any{"version": "contract", "db": map[string]any{"ok": true, "dialect": "sqlite"}})
	case "GET /api/v1/projects":
		if !bearer {
			fail(401, "unauthorized")
			return
		}
		reply(200, s.projects)
	case "POST /api/v1/projects":
		var req client.AddProjectRequest
		if !bearer || json.NewDecoder(r.Body).Decode(&req) != nil {
			fail(401, "unauthorized")
			return
		}
		if req.Mode == "clone" && req.URL == "" || req.Mode != "clone" && req.URL != "" {
			fail(400, "invalid_input")
			return
		}
		p := client.Project{ID: "0f0e0d0c-0000-4000-8000-00000000000" + string(rune('0'+len(s.projects))), Name: req.Name, Path: req.Path,
			Dir: "/srv/ws/" + req.Path, Mode: req.Mode, Origin: req.URL, CreatedAt: 1, UpdatedAt: 1}
		s.projects = append(s.projects, p)
		reply(201, p)
	default:
		fail(404, "not_found")
	}
}

func (s *contractServer) called() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.calls, "; ")
}

func startContract(t *testing.T) (*contractServer, *httptest.Server, *clientEnv, string) {
	cs := &contractServer{t: t}
	srv := httptest.NewServer(cs)
	t.Cleanup(srv.Close)
	cfg := t.TempDir()
	e := &clientEnv{
		getenv:     func(string) string { return "" },
		configDir:  func() (string, error) { return cfg, nil },
		hostname:   func() (string, error) { return "testhost", nil },
		tty:        true,
		readSecret: func() (string, error) { return contractPassword, nil },
	}
	return cs, srv, e, filepath.Join(cfg, "aos", "credentials.json")
}

// TestInteractiveLoginContract: password and TOTP open a session, which
// mints a cli@<host> token and is then closed; the token is stored with
// its id. A wrong code saves nothing.
func TestInteractiveLoginContract(t *testing.T) {
	cs, srv, e, credPath := startContract(t)
	e.stdin = strings.NewReader("000000\n")
	_, errOut, code := runAOS(context.Background(), e, nil, "login", "--server", srv.URL)
	if code != exitAuth || !strings.Contains(errOut, "login refused") {
		t.Fatalf("wrong TOTP: exit %d %s", code, errOut)
	}
	if _, err := os.Stat(credPath); !os.IsNotExist(err) {
		t.Fatalf("a refused login saved credentials: %v", err)
	}

	e.stdin = strings.NewReader(contractTOTP + "\n")
	out, errOut, code := runAOS(context.Background(), e, nil, "login", "--server", srv.URL)
	if code != 0 {
		t.Fatalf("login: exit %d\n%s%s", code, out, errOut)
	}
	for _, secret := range []string{contractPassword, contractSession, contractCSRF, contractToken} {
		if strings.Contains(out+errOut, secret) {
			t.Fatalf("login printed a secret %q:\n%s%s", secret, out, errOut)
		}
	}
	if got, want := cs.called(), "POST /api/v1/auth/login; POST /api/v1/auth/login; POST /api/v1/tokens; POST /api/v1/auth/logout"; got != want {
		t.Fatalf("calls: %s, want %s", got, want)
	}
	var c credentials
	b, _ := os.ReadFile(credPath)
	if err := json.Unmarshal(b, &c); err != nil || c.Token != contractToken || c.TokenID != "tok_1" || c.Server != srv.URL {
		t.Fatalf("stored %+v %v", c, err)
	}
	out, _, code = runAOS(context.Background(), e, nil, "logout")
	if code != 0 || !strings.Contains(out, "aos token revoke tok_1") {
		t.Fatalf("logout: exit %d\n%s", code, out)
	}
}

// TestProjectCommandsContract: aos project add sends {name, path, mode,
// url?} for the three modes and aos project ls lists the result.
func TestProjectCommandsContract(t *testing.T) {
	_, srv, e, _ := startContract(t)
	e.getenv = func(k string) string {
		return map[string]string{"AOS_SERVER": srv.URL, "AOS_TOKEN": contractToken}[k]
	}
	run := func(args ...string) (string, int) {
		out, errOut, code := runAOS(context.Background(), e, nil, args...)
		return out + errOut, code
	}
	if out, code := run("project", "add", "repos/app"); code != 0 || !strings.Contains(out, "app (existing, /srv/ws/repos/app)") {
		t.Fatalf("add existing: %d %s", code, out)
	}
	if out, code := run("project", "add", "fresh", "--init", "--name", "Fresh"); code != 0 || !strings.Contains(out, "Fresh (init") {
		t.Fatalf("add --init: %d %s", code, out)
	}
	var p client.Project
	out, _, code := runAOS(context.Background(), e, nil, "project", "add", "lib", "--clone", "https://example.com/lib.git", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &p) != nil || p.Mode != "clone" || p.Origin != "https://example.com/lib.git" {
		t.Fatalf("add --clone --json: %d %s", code, out)
	}
	if out, code := run("project", "add", "x", "--init", "--clone", "u"); code != exitUsage {
		t.Fatalf("--init with --clone: %d %s", code, out)
	}
	out, code = run("project", "ls")
	if code != 0 || strings.Count(out, "\n") != 4 || !strings.HasPrefix(out, "ID") || !strings.Contains(out, "Fresh") || !strings.Contains(out, "clone") {
		t.Fatalf("ls: %d\n%s", code, out)
	}
	var ps []client.Project
	out, _, code = runAOS(context.Background(), e, nil, "project", "ls", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &ps) != nil || len(ps) != 3 {
		t.Fatalf("ls --json: %d %s", code, out)
	}
}
