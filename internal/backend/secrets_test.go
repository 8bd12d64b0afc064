package backend

import (
	"strings"
	"testing"
)

func TestScanLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line string
		rule string // "" = no finding
	}{
		{`key = "AKIAZ7QW3ERTY5UIOPLK"`, "aws-access-token"},
		{`token: ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789`, "github-pat"},
		{`-----BEGIN OPENSSH PRIVATE KEY-----`, "private-key"},
		{`x = "q8Zr2LmW9xKp4TvB7nYc3HsJ6gDf1QaE"`, "high-entropy"},
		{`commit 3f786850e387550fdab836ed7e6dc881de23001b`, ""},
		{`path /tmp/TestCommandEngineCannotReadSecrets2853927341/003/wt`, ""},
		{`password = "changeme"`, ""},
		{`the quick brown fox jumps over the lazy dog`, ""},
	}
	for _, c := range cases {
		fs := ScanLine(c.line)
		switch {
		case c.rule == "" && len(fs) > 0:
			t.Errorf("%q: unexpected finding %+v", c.line, fs)
		case c.rule != "" && (len(fs) == 0 || fs[0].Rule != c.rule):
			t.Errorf("%q: findings %+v, want rule %s", c.line, fs, c.rule)
		}
		for _, f := range fs {
			if strings.Contains(c.line, strings.TrimSuffix(f.Redacted[:4], "…")+f.Redacted[4:]) {
				t.Errorf("%q: finding not redacted: %q", c.line, f.Redacted)
			}
		}
	}
}

func FuzzParseResult(f *testing.F) {
	f.Add([]byte(`{"schema":"aios.online-agent.runtime-result.v1","status":"COMPLETED","summary":"s","verification":[{"label":"t","argv":["go","test"],"cwd":"."}],"evidence":{}}`))
	f.Add([]byte(`{"schema":"x"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseResult(b)
		if err != nil {
			return
		}
		for _, v := range r.Verification {
			if strings.HasPrefix(v.Cwd, "/") || strings.HasPrefix(v.Cwd, "..") || len(v.Argv) == 0 {
				t.Fatalf("accepted bad verification %+v", v)
			}
		}
	})
}
