package cli

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/store/storetest"
)

// TestSetupCommand runs aos setup against the real server: a wrong setup
// token exits 3; a wrong TOTP code, a short password or two different
// passwords create nothing and leave the token usable; the right answers
// create the owner and save a working token (the setup session is logged
// out); a second aos setup is refused. The banner of aos up / aos server
// points to aos setup before and to aos login after.
func TestSetupCommand(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		r := setupRemote(t, db)
		var banner strings.Builder
		if err := printSetupToken(t.Context(), &banner, r.auth, "test", r.srv.URL); err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`setup token: (aos_setup_\S+)`).FindStringSubmatch(banner.String())
		if m == nil || !strings.Contains(banner.String(), "aos setup --server "+r.srv.URL) {
			t.Fatalf("first-run banner:\n%s", banner.String())
		}
		tok := m[1]
		// shown is what the command printed so far; the code is computed
		// from the secret it showed, at the server's clock.
		var shown syncBuffer
		code := func() string {
			s := regexp.MustCompile(`secret: ([A-Z2-7]+)`).FindStringSubmatch(shown.String())
			if s == nil {
				t.Fatalf("no TOTP secret shown before the code was asked:\n%s", shown.String())
			}
			return totpAt(t, s[1], r.clk.Now())
		}
		setup := func(in *lines, secrets ...string) (string, string, exitCode) {
			shown = syncBuffer{}
			jar := &cookieLog{}
			out, errOut, c := runAOS(t.Context(), r.terminal(in, jar, secrets...), &shown, "setup", "--server", r.srv.URL)
			if len(jar.sessions()) != 0 && c != 0 {
				t.Fatalf("a refused setup opened a session")
			}
			return out, errOut, c
		}
		stillRequired := func(what string) {
			t.Helper()
			if req, err := r.auth.SetupRequired(t.Context()); err != nil || !req {
				t.Fatalf("%s: setup required = %v (%v)", what, req, err)
			}
			if _, saved := r.credFile(); saved {
				t.Fatalf("%s: credentials were saved", what)
			}
		}

		refused := []struct {
			name    string
			in      *lines
			secrets []string
			exit    exitCode
			want    string
		}{
			{"wrong setup token", &lines{}, []string{"aos_setup_wrong"}, exitAuth, "setup token is wrong"},
			{"wrong TOTP code", &lines{next: []func() string{func() string { return wrongCode(code()) }}},
				[]string{tok, ownerPassword, ownerPassword}, exitAuth, "TOTP code is wrong"},
			{"short password", &lines{next: []func() string{code}}, []string{tok, "short", "short"}, exitUsage, "at least 12 characters"},
			{"passwords differ", &lines{next: []func() string{code}}, []string{tok, ownerPassword, ownerPassword + "!"}, exitUsage, "passwords differ"},
			{"empty setup token", &lines{}, []string{""}, exitUsage, "empty setup token"},
		}
		for _, tc := range refused {
			out, errOut, c := setup(tc.in, tc.secrets...)
			if c != tc.exit || !strings.Contains(errOut, tc.want) {
				t.Fatalf("%s: exit %d, want %d with %q\n%s%s", tc.name, c, tc.exit, tc.want, out, errOut)
			}
			noSecrets(t, tc.name, out+errOut, tok, ownerPassword)
			stillRequired(tc.name)
		}

		// Success, with the token on stdin: the same token still works.
		jar := &cookieLog{}
		shown = syncBuffer{}
		e := r.terminal(&lines{next: []func() string{func() string { return tok }, code}}, jar, ownerPassword, ownerPassword)
		out, errOut, c := runAOS(t.Context(), e, &shown, "setup", "--server", r.srv.URL, "--setup-token-stdin")
		if c != 0 || !strings.Contains(out, "owner account created") || !strings.Contains(out, "otpauth://totp/") {
			t.Fatalf("setup: exit %d\n%s%s", c, out, errOut)
		}
		noSecrets(t, "setup", out+errOut, tok, ownerPassword)
		if req, err := r.auth.SetupRequired(t.Context()); err != nil || req {
			t.Fatalf("after setup: setup required = %v (%v)", req, err)
		}
		if mode, saved := r.credFile(); !saved || mode != 0o600 {
			t.Fatalf("credentials: saved %v, mode %v", saved, mode)
		}
		if sids := jar.sessions(); len(sids) != 1 || r.sessionLive(sids[0]) {
			t.Fatalf("setup sessions %d; the one that minted the token must be logged out", len(sids))
		}
		sout, serr, c := runAOS(t.Context(), r.terminal(&lines{}, nil), nil, "status")
		if c != 0 {
			t.Fatalf("status with the token aos setup saved: exit %d\n%s%s", c, sout, serr)
		}

		// Done: a second setup is refused, the banner points to aos login.
		before, _ := os.ReadFile(r.cfg + "/aos/credentials.json")
		out, errOut, c = setup(&lines{}, tok)
		if c != exitFailure || !strings.Contains(errOut, "already set up: use aos login") {
			t.Fatalf("second setup: exit %d\n%s%s", c, out, errOut)
		}
		if after, _ := os.ReadFile(r.cfg + "/aos/credentials.json"); string(after) != string(before) {
			t.Fatal("a refused setup changed the stored credentials")
		}
		banner.Reset()
		if err := printSetupToken(t.Context(), &banner, r.auth, "test", r.srv.URL); err != nil {
			t.Fatal(err)
		}
		if got := banner.String(); strings.Contains(got, "aos_setup_") || !strings.Contains(got, "aos login --server "+r.srv.URL) {
			t.Fatalf("banner after setup:\n%s", got)
		}
	})
}

// TestSetupThrottled: after too many failed attempts from an address the
// server answers 429 and aos setup says when to retry.
func TestSetupThrottled(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		r := setupRemote(t, db)
		if _, _, err := r.auth.IssueSetupToken(t.Context(), "test"); err != nil {
			t.Fatal(err)
		}
		var errOut string
		c := exitOK
		for i := 0; i < 10 && c != exitFailure; i++ {
			_, errOut, c = runAOS(t.Context(), r.terminal(&lines{}, nil, "aos_setup_wrong"), nil, "setup", "--server", r.srv.URL)
			if c != exitAuth && c != exitFailure {
				t.Fatalf("attempt %d: exit %d %s", i, c, errOut)
			}
		}
		if c != exitFailure || !regexp.MustCompile(`too many failed attempts from this address: try again in \d+m?\d*s`).MatchString(errOut) {
			t.Fatalf("no throttle after 10 attempts: exit %d %s", c, errOut)
		}
	})
}
