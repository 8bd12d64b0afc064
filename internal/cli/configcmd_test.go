package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCmd: aos config show names each value's source, preview shows
// the route, check refuses a bad file with file:line: field and exit 1,
// and hostile text in a value is refused, never printed raw.
func TestConfigCmd(t *testing.T) {
	t.Parallel()
	xdg, proj := t.TempDir(), t.TempDir()
	getenv := mapEnv(map[string]string{"XDG_CONFIG_HOME": xdg})
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	repoFile, userFile := filepath.Join(proj, ".aos", "config.yaml"), filepath.Join(xdg, "aos", "config.yaml")
	write(repoFile, "version: 1\ndefaults: {model: m-repo, effort: low}\nselection:\n  rules: [{id: r, targets: [m-repo, m-two, 'engine:codex']}]\n")
	write(userFile, "version: 1\noverrides:\n  defaults: {effort: max}\n")
	run := func(args ...string) (stdout, stderr string, code int) {
		t.Helper()
		var o, e bytes.Buffer
		cmd := newConfigCmd()
		cmd.SetArgs(append(args, "--project", proj))
		cmd.SetOut(&o)
		code = int(execute(withEnv(context.Background(), getenv), cmd, &e))
		return o.String(), e.String(), code
	}
	out, stderr, code := run("show")
	if code != 0 {
		t.Fatalf("show: %d %s", code, stderr)
	}
	for _, want := range []string{"defaults.model = m-repo\t(repo " + repoFile + ":2)", "defaults.effort = max\t(user " + userFile + ":3)"} {
		if !strings.Contains(out, want) {
			t.Errorf("show output lacks %q:\n%s", want, out)
		}
	}
	if out, _, code := run("preview", "--model", "m-two"); code != 0 || !strings.Contains(out, "1. model m-two\n  2. model m-repo\n  3. engine codex\n") {
		t.Fatalf("preview:\n%s", out)
	}
	for _, tc := range []struct{ content, want string }{
		{"version: 1\nselection:\n  rules:\n    - {id: a, targets: [x]}\n    - {id: a, targets: [y]}\n", repoFile + ":5: selection.rules[1].id: duplicate rule id"},
		{"version: 1\ndefaults: {model: \"m\\e[2Jx\"}\n", repoFile + ":2: defaults.model: must be one non-empty line"},
	} {
		write(repoFile, tc.content)
		if _, stderr, code := run("check"); code != 1 || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "\x1b") {
			t.Fatalf("check = %d %q, want 1 and %q", code, stderr, tc.want)
		}
	}
}
