package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store/storetest"
)

// TestInteractiveLogin runs aos login against the real server with a real
// owner: a wrong password or TOTP code exits 3 and saves nothing; the
// right ones save a token (0600) that aos status then uses, the session
// that minted it is logged out, and no secret is printed.
func TestInteractiveLogin(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		r := setupRemote(t, db)
		secret := r.setUpOwner()
		code := func() string { return totpAt(t, secret, r.clk.Now()) }

		tests := []struct {
			name     string
			password string
			code     func() string
		}{
			{"wrong password", ownerPassword + "x", code},
			{"wrong TOTP code", ownerPassword, func() string { return wrongCode(code()) }},
		}
		for _, tc := range tests {
			jar := &cookieLog{}
			e := r.terminal(&lines{next: []func() string{tc.code}}, jar, tc.password)
			out, errOut, c := runAOS(t.Context(), e, nil, "login", "--server", r.srv.URL)
			if c != exitAuth || !strings.Contains(errOut, "login refused") {
				t.Fatalf("%s: exit %d\n%s%s", tc.name, c, out, errOut)
			}
			if _, saved := r.credFile(); saved {
				t.Fatalf("%s: credentials were saved", tc.name)
			}
			if len(jar.sessions()) != 0 {
				t.Fatalf("%s: a session was opened", tc.name)
			}
			noSecrets(t, tc.name, out+errOut, ownerPassword, secret)
		}

		jar := &cookieLog{}
		e := r.terminal(&lines{next: []func() string{code}}, jar, ownerPassword)
		out, errOut, c := runAOS(t.Context(), e, nil, "login", "--server", r.srv.URL)
		if c != 0 || !strings.Contains(out, "logged in to "+r.srv.URL) {
			t.Fatalf("login: exit %d\n%s%s", c, out, errOut)
		}
		if mode, saved := r.credFile(); !saved || mode != 0o600 {
			t.Fatalf("credentials: saved %v, mode %v", saved, mode)
		}
		var creds credentials
		b, err := os.ReadFile(filepath.Join(r.cfg, "aos", "credentials.json"))
		if err != nil || json.Unmarshal(b, &creds) != nil || creds.Token == "" || creds.TokenID == "" || creds.Server != r.srv.URL {
			t.Fatalf("stored credentials: %v", err)
		}
		noSecrets(t, "login", out+errOut, ownerPassword, secret, creds.Token)
		sids := jar.sessions()
		if len(sids) != 1 {
			t.Fatalf("login opened %d sessions, want 1", len(sids))
		}
		if r.sessionLive(sids[0]) {
			t.Fatal("the session that minted the token is still live")
		}
		// Positive control: a session nobody logged out is live.
		r.clk.Add(30 * time.Second)
		ns, err := r.auth.Login(t.Context(), ipLoopback, ownerPassword, code())
		if err != nil {
			t.Fatal(err)
		}
		if !r.sessionLive(ns.Secret) {
			t.Fatal("sessionLive does not see a live session")
		}

		// The stored token works for the client commands.
		sout, serr, c := runAOS(t.Context(), r.terminal(strings.NewReader(""), nil), nil, "status")
		if c != 0 || !strings.Contains(sout, "test") {
			t.Fatalf("status with the stored token: exit %d\n%s%s", c, sout, serr)
		}
		noSecrets(t, "status", sout+serr, creds.Token)
	})
}
