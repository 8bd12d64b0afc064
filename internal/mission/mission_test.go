package mission_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestBound(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in        string
		n         int
		out       string
		truncated bool
	}{
		{"short", `{"a":1}`, 10, `{"a":1}`, false},
		{"exact", `"abcd"`, 6, `"abcd"`, false},
		{"cut", `{"a":"bcdef"}`, 5, `"{\"a\":"`, true},
		{"runes not bytes", `"ééé"`, 5, `"ééé"`, false},
		{"cut on a rune", `"éééé"`, 3, `"\"éé"`, true},
		{"empty", ``, 3, ``, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, tr := mission.Bound(json.RawMessage(tc.in), tc.n)
			if string(got) != tc.out || tr != tc.truncated {
				t.Fatalf("Bound(%s, %d) = %s, %v; want %s, %v", tc.in, tc.n, got, tr, tc.out, tc.truncated)
			}
		})
	}
}

func TestWithoutNative(t *testing.T) {
	for in, want := range map[string]string{
		`{"blocks":[],"native":{"x":1},"stop":"end"}`: `{"blocks":[],"stop":"end"}`,
		`{"blocks":["native"]}`:                       `{"blocks":["native"]}`,
		`["native"]`:                                  `["native"]`,
		`not json "native"`:                           `not json "native"`,
		``:                                            ``,
	} {
		if got := string(mission.WithoutNative(json.RawMessage(in))); got != want {
			t.Errorf("WithoutNative(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestPrincipalCan(t *testing.T) {
	for _, tc := range []struct {
		scopes      []string
		read, write bool
	}{
		{[]string{"read"}, true, false},
		{[]string{"write"}, true, true},
		{[]string{"read", "write"}, true, true},
		{nil, false, false},
	} {
		p := mission.Principal{Scopes: tc.scopes}
		if p.Can(mission.ScopeRead) != tc.read || p.Can(mission.ScopeWrite) != tc.write {
			t.Errorf("%v: read %v write %v", tc.scopes, p.Can(mission.ScopeRead), p.Can(mission.ScopeWrite))
		}
	}
}

// TestTokens: a token is shown once, stored hashed, authenticates with its
// scopes until revoked, and nothing else authenticates.
func TestTokens(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		svc := mission.New(kernel.New(db.Store, kernel.Options{}), mission.Options{WorkspaceRoot: t.TempDir()})
		ctx := context.Background()
		nt, err := svc.CreateToken(ctx, "cli:me", "laptop", []string{"read", "read"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(nt.Secret, mission.TokenPrefix) || len(nt.Secret) != 47 || strings.Join(nt.Scopes, ",") != "read" {
			t.Fatalf("token %+v", nt)
		}
		other, err := svc.CreateToken(ctx, "cli:me", "", []string{"write"})
		if err != nil || other.Secret == nt.Secret {
			t.Fatalf("second token: %v", err)
		}
		for _, bad := range [][]string{nil, {"admin"}} {
			if _, err := svc.CreateToken(ctx, "cli:me", "x", bad); !errors.Is(err, mission.ErrInvalidInput) {
				t.Errorf("scopes %v: %v", bad, err)
			}
		}
		// A control character could drive the terminal of aos token ls.
		for _, bad := range []string{"a\x1b[2Jb", "tab\t", "nl\n", "nul\x00", "del\x7f", "csi\u009b", "rlo\u202egnp.exe", "zwsp\u200b", "bad\xff", strings.Repeat("x", 101)} {
			if _, err := svc.CreateToken(ctx, "cli:me", bad, []string{"read"}); !errors.Is(err, mission.ErrInvalidInput) {
				t.Errorf("name %q: %v", bad, err)
			}
		}
		if ts, err := svc.ListTokens(ctx); err != nil || len(ts) != 2 {
			t.Fatalf("refused names created tokens: %d, %v", len(ts), err)
		}
		// Stored hashed: the row holds the SHA-256, not the secret.
		rows, err := db.Store.ListAPITokens(ctx)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256([]byte(nt.Secret))
		for _, r := range rows {
			if r.ID == nt.ID && r.Hash != hex.EncodeToString(sum[:]) || strings.Contains(fmt.Sprint(r), nt.Secret[4:]) {
				t.Fatalf("stored %+v", r)
			}
		}
		ts, err := svc.ListTokens(ctx)
		if err != nil || len(ts) != 2 {
			t.Fatalf("list: %v %v", ts, err)
		}
		raw, _ := json.Marshal(ts)
		if strings.Contains(string(raw), nt.Secret) || strings.Contains(string(raw), nt.Secret[4:]) {
			t.Fatal("token list holds a secret")
		}
		p, err := svc.Authenticate(ctx, nt.Secret)
		if err != nil || p.TokenID != nt.ID || !p.Can("read") || p.Can("write") {
			t.Fatalf("authenticate: %+v %v", p, err)
		}
		for _, bad := range []string{"", "aos_", nt.Secret[:len(nt.Secret)-1] + "A", strings.ToUpper(nt.Secret), nt.Secret + "x"} {
			if bad == nt.Secret {
				continue
			}
			if _, err := svc.Authenticate(ctx, bad); !errors.Is(err, mission.ErrUnauthorized) {
				t.Errorf("authenticate %q: %v", bad, err)
			}
		}
		if err := svc.RevokeToken(ctx, "cli:me", nt.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Authenticate(ctx, nt.Secret); !errors.Is(err, mission.ErrUnauthorized) {
			t.Fatalf("revoked token: %v", err)
		}
		if err := svc.RevokeToken(ctx, "cli:me", nt.ID); !errors.Is(err, mission.ErrNotFound) {
			t.Fatalf("revoke twice: %v", err)
		}
		audit, err := svc.ListAudit(ctx, 0, 0)
		if err != nil || len(audit) != 3 || audit[0].Action != "token.revoke" || audit[0].Actor != "cli:me" {
			t.Fatalf("audit %+v %v", audit, err)
		}
	})
}

// TestConfine covers workspace confinement directly, with symlinks both
// ways.
func TestConfine(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{"a/b", "c"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(outside, filepath.Join(root, "out")))
	must(os.Symlink(filepath.Join(root, "c"), filepath.Join(outside, "in")))
	db := storetest.New(t, "sqlite")
	svc := mission.New(kernel.New(db.Store, kernel.Options{}), mission.Options{WorkspaceRoot: root})
	for ws, ok := range map[string]bool{
		"a/b": true, filepath.Join(root, "c"): true, "a/../c": true, "a/b/../../c": true,
		"": false, "..": false, "a/../../": false, "out": false, outside: false, "/": false, "file": false, "nope": false,
		filepath.Join(outside, "in"): true, // a link from outside to inside lands inside
		".":                          false,
		"a\x00b":                     false,
	} {
		_, err := svc.CreateMission(context.Background(), "test", mission.CreateRequest{Objective: "x", Workspace: ws, Model: "claude-opus-5-5"})
		if ok != (err == nil) {
			t.Errorf("workspace %q: %v", ws, err)
		}
	}
}
