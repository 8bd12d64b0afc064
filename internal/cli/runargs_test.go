package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestRunWithoutObjective: aos run without its objective (or with it split
// into words) says what is missing, shows the usage and exits 2, before it
// opens anything.
func TestRunWithoutObjective(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no objective", []string{"run"}, "aos: the objective is missing: aos run [flags] \"objective\""},
		{"only flags", []string{"run", "--max-turns", "3"}, "aos: the objective is missing"},
		{"empty objective", []string{"run", " "}, "aos: the objective is missing"},
		{"unquoted objective", []string{"run", "fix", "it"}, "give the objective as one argument, in quotes (got 2 arguments)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			getenv := mapEnv(map[string]string{"AOS_DATA_DIR": t.TempDir()}) // nothing may be opened there anyway
			cmd := NewRootCmd("test")
			cmd.SetArgs(tc.args)
			var out, errOut bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&errOut)
			code := execute(withEnv(context.Background(), getenv), cmd, &errOut)
			if code != exitUsage {
				t.Errorf("exit %d, want %d", code, exitUsage)
			}
			got := errOut.String()
			if !strings.Contains(got, tc.want) || !strings.Contains(got, "Usage:") || !strings.Contains(got, "--model") {
				t.Errorf("stderr does not say %q with the usage:\n%s", tc.want, got)
			}
			if strings.Contains(got, "accepts 1 arg") {
				t.Errorf("stderr has cobra's message:\n%s", got)
			}
		})
	}
}
