package cli

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/store/storetest"
)

// TestLoginTokenStdin: a token the server refuses is not saved; a good one
// is saved 0600 in a 0700 directory and then used without AOS_* set;
// logout removes it.
func TestLoginTokenStdin(t *testing.T) {
	r := setupRemote(t, storetest.New(t, "sqlite"))
	r.env = map[string]string{} // nothing but what login stores
	credPath := filepath.Join(r.cfg, "aos", "credentials.json")
	login := func(stdin string, args ...string) (string, string, exitCode) {
		return runAOS(t.Context(), r.clientEnv(stdin), nil, append([]string{"login"}, args...)...)
	}

	// Refused token: exit 3, nothing saved, the token not echoed.
	bad := "aos_not-a-real-token-0123456789"
	out, errOut, code := login(bad+"\n", "--server", r.srv.URL, "--token-stdin")
	if code != exitAuth || !strings.Contains(errOut, "refused") || strings.Contains(out+errOut, bad) {
		t.Fatalf("bad token: exit %d\n%s%s", code, out, errOut)
	}
	if _, err := os.Stat(credPath); !os.IsNotExist(err) {
		t.Fatalf("a refused token was saved: %v", err)
	}
	// Unreachable server: exit 5, nothing saved.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	_ = ln.Close()
	if _, errOut, code := login(r.token, "--server", dead, "--token-stdin"); code != exitUnreachable || strings.Contains(errOut, r.token) {
		t.Fatalf("unreachable: exit %d %s", code, errOut)
	}
	// No server, empty stdin: usage errors.
	if _, _, code := login(r.token, "--token-stdin"); code != exitUsage {
		t.Fatalf("no --server: exit %d", code)
	}
	if _, _, code := login("\n", "--server", r.srv.URL, "--token-stdin"); code != exitUsage {
		t.Fatalf("empty token: exit %d", code)
	}
	// Not a terminal, no --token-stdin: usage error.
	if _, _, code := login("", "--server", r.srv.URL); code != exitUsage {
		t.Fatalf("interactive without a terminal: exit %d", code)
	}
	if _, err := os.Stat(credPath); !os.IsNotExist(err) {
		t.Fatalf("a failed login saved credentials: %v", err)
	}
	// Not logged in yet: exit 3.
	if _, errOut, code := r.aos("status"); code != exitAuth || !strings.Contains(errOut, "not logged in") {
		t.Fatalf("status before login: exit %d %s", code, errOut)
	}

	out, errOut, code = login(r.token+"\n", "--server", r.srv.URL+"/", "--token-stdin")
	if code != 0 || strings.Contains(out+errOut, r.token) {
		t.Fatalf("login: exit %d\n%s%s", code, out, errOut)
	}
	fi, err := os.Stat(credPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi.Mode(), err)
	}
	di, err := os.Stat(filepath.Dir(credPath))
	if err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("credentials dir: %v %v", di.Mode(), err)
	}
	var c credentials
	b, _ := os.ReadFile(credPath)
	if err := json.Unmarshal(b, &c); err != nil || c.Server != r.srv.URL || c.Token != r.token {
		t.Fatalf("stored %+v (%v)", c, err)
	}
	if left, _ := filepath.Glob(filepath.Join(r.cfg, "aos", ".credentials-*")); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
	if out := r.ok("status"); !strings.Contains(out, "database") || !strings.Contains(out, r.srv.URL) || !strings.Contains(out, "workspace root") ||
		!strings.Contains(out, r.root) {
		t.Fatalf("status with stored credentials:\n%s", out)
	}
	// AOS_TOKEN overrides the stored token.
	r.env["AOS_TOKEN"] = "aos_wrong"
	if _, _, code := r.aos("status"); code != exitAuth {
		t.Fatalf("AOS_TOKEN override: exit %d", code)
	}
	delete(r.env, "AOS_TOKEN")

	out = r.ok("logout")
	if !strings.Contains(out, "the token is revoked on the server") {
		t.Fatalf("logout:\n%s", out)
	}
	if _, err := r.svc.Authenticate(context.Background(), r.token); err == nil {
		t.Fatal("the token still works after aos logout")
	}
	if _, err := os.Stat(credPath); !os.IsNotExist(err) {
		t.Fatalf("logout left the file: %v", err)
	}
	if out := r.ok("logout"); !strings.Contains(out, "not logged in") {
		t.Fatalf("second logout:\n%s", out)
	}
	if _, _, code := r.aos("status"); code != exitAuth {
		t.Fatalf("status after logout: exit %d", code)
	}
	// A server that cannot be reached: the credentials go anyway, and aos
	// says the token is still to be revoked.
	stale, _ := json.Marshal(credentials{Server: dead, Token: r.read, TokenID: "tok_x"})
	if err := os.WriteFile(credPath, stale, 0o600); err != nil {
		t.Fatal(err)
	}
	out = r.ok("logout")
	if !strings.Contains(out, "could not be revoked") || !strings.Contains(out, "aos token revoke tok_x") || strings.Contains(out, r.read) {
		t.Fatalf("logout with the server down:\n%s", out)
	}
	if _, err := os.Stat(credPath); !os.IsNotExist(err) {
		t.Fatalf("logout left the file: %v", err)
	}
	// A token piped in has no stored id: aos says how to find it. A
	// corrupt file is removed with the same advice.
	stale, _ = json.Marshal(credentials{Server: dead, Token: r.read})
	if err := os.WriteFile(credPath, stale, 0o600); err != nil {
		t.Fatal(err)
	}
	if out = r.ok("logout"); !strings.Contains(out, "aos token ls to find it") {
		t.Fatalf("logout of an id-less token with the server down:\n%s", out)
	}
	if err := os.WriteFile(credPath, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out = r.ok("logout"); !strings.Contains(out, "could not be read") || !strings.Contains(out, "aos token ls") {
		t.Fatalf("logout of a corrupt file:\n%s", out)
	}
	if _, err := os.Stat(credPath); !os.IsNotExist(err) {
		t.Fatalf("logout left the corrupt file: %v", err)
	}
}
