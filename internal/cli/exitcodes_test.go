package cli

import (
	"net"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/store/storetest"
)

// TestClientExitCodes: each class of failure has its exit code and one
// line on stderr, and never shows the token.
func TestClientExitCodes(t *testing.T) {
	r := setupRemote(t, storetest.New(t, "sqlite"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	_ = ln.Close()
	ws := r.workspace("p")
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code exitCode
		msg  string
	}{
		{"not logged in", map[string]string{}, []string{"mission", "ls"}, exitAuth, "not logged in"},
		{"refused token", map[string]string{"AOS_TOKEN": "aos_bogus"}, []string{"mission", "ls"}, exitAuth, "not authorized (unauthorized)"},
		{"read-only token writes", map[string]string{"AOS_TOKEN": r.read}, []string{"mission", "create", "x", "--workspace", ws}, exitAuth, "forbidden"},
		{"unknown mission", nil, []string{"mission", "show", "00000000-0000-4000-8000-000000000000"}, exitNotFound, "not found"},
		{"unknown prefix", nil, []string{"mission", "cancel", "ffff"}, exitNotFound, "no mission ffff"},
		{"unknown wait", nil, []string{"approve", "00000000-0000-4000-8000-000000000000"}, exitNotFound, "not found"},
		{"unknown rule", nil, []string{"policy", "rm", "nope"}, exitNotFound, "not found"},
		{"unreachable", map[string]string{"AOS_SERVER": dead}, []string{"status"}, exitUnreachable, "unreachable"},
		{"unreachable watch", map[string]string{"AOS_SERVER": dead}, []string{"mission", "watch", "00000000-0000-4000-8000-000000000000"}, exitUnreachable, "unreachable"},
		{"bad server URL", map[string]string{"AOS_SERVER": "ftp://x"}, []string{"status"}, exitUsage, "must be http"},
		{"bad flag", nil, []string{"mission", "ls", "--bogus"}, exitUsage, "unknown flag"},
		{"missing argument", nil, []string{"mission", "show"}, exitUsage, "accepts 1 arg"},
		{"unknown command", nil, []string{"frobnicate"}, exitUsage, "unknown command"},
		{"exclusive flags", nil, []string{"mission", "create", "x", "--project", "p", "--workspace", ws}, exitUsage, "none of the others"},
		{"no workspace", nil, []string{"mission", "create", "x"}, exitUsage, "--workspace"},
		{"bad network", nil, []string{"mission", "create", "x", "--workspace", ws, "--network", "wide"}, exitUsage, "none or open"},
		{"server refuses input", nil, []string{"mission", "create", "x", "--workspace", "/etc"}, exitUsage, "invalid input"},
		{"bad policy decision", nil, []string{"policy", "add", "--tool", "shell", "--decision", "maybe"}, exitUsage, "invalid input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			saved := r.env
			t.Cleanup(func() { r.env = saved })
			if tc.env != nil {
				env := map[string]string{"AOS_SERVER": r.srv.URL, "AOS_TOKEN": r.token}
				if len(tc.env) == 0 {
					env = map[string]string{}
				}
				for k, v := range tc.env {
					env[k] = v
				}
				r.env = env
			}
			out, errOut, code := r.aos(tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.msg) {
				t.Fatalf("exit %d, want %d with %q\nstdout: %s\nstderr: %s", code, tc.code, tc.msg, out, errOut)
			}
			if !strings.HasPrefix(errOut, "aos: ") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
				t.Fatalf("stderr is not one line \"aos: …\": %q", errOut)
			}
			if strings.Contains(out+errOut, r.token) || strings.Contains(out+errOut, r.read) {
				t.Fatalf("the token was printed")
			}
		})
	}
}
