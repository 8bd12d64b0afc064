package cli

import (
	"strings"
	"testing"
)

// TestSettingsLocalBaseURL: aos settings set --local-base-url stores a
// validated http(s) endpoint, shows it, refuses anything else, and ""
// clears it.
func TestSettingsLocalBaseURL(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"AOS_DATA_DIR": dir + "/data", "AOS_WORKSPACE_ROOT": dir + "/ws"}
	e := &clientEnv{getenv: func(k string) string { return env[k] }}
	out, errOut, code := runAOS(t.Context(), e, nil, "settings", "set", "--local-base-url", "http://127.0.0.1:11434/v1")
	if code != 0 || !strings.Contains(out, "local base URL:") || !strings.Contains(out, "http://127.0.0.1:11434/v1") {
		t.Fatalf("set: exit %d\n%s%s", code, out, errOut)
	}
	for _, bad := range []string{"file:///etc/passwd", "http://user:secret@host/v1", "127.0.0.1:11434"} {
		out, errOut, code := runAOS(t.Context(), e, nil, "settings", "set", "--local-base-url", bad)
		if code == 0 || strings.Contains(out+errOut, "secret@") {
			t.Errorf("%s: exit %d\n%s%s", bad, code, out, errOut)
		}
	}
	out, _, code = runAOS(t.Context(), e, nil, "settings", "--json")
	if code != 0 || !strings.Contains(out, `"localBaseUrl": "http://127.0.0.1:11434/v1"`) {
		t.Fatalf("a refused value changed the setting:\n%s", out)
	}
	out, _, code = runAOS(t.Context(), e, nil, "settings", "set", "--local-base-url", "")
	if code != 0 || !strings.Contains(out, "local base URL:    not set") {
		t.Fatalf("clear: exit %d\n%s", code, out)
	}
}
