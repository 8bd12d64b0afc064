package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/demo"
)

// TestRunWithoutKeySaysWhatToDoHere: aos run on a real model without its
// provider's key ends blocked, and the summary says what applies to aos
// run — set the key in this shell and run it again — with the mission's
// real id, not a worker to restart or a placeholder.
func TestRunWithoutKeySaysWhatToDoHere(t *testing.T) {
	bin := buildAOS(t)
	repo := filepath.Join(t.TempDir(), "calc")
	if err := demo.WriteRepo(repo); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + t.TempDir()}
	r := run(t, bin, env, "run", "--project", repo, "--model", "claude-haiku-5-5", "--criterion", "c", "--on-ask", "deny", "fix it")
	m := missionRe.FindStringSubmatch(r.out)
	if r.code != 7 || m == nil {
		t.Fatalf("aos run without a key: exit %d, want 7 (blocked):\n%s", r.code, r.out)
	}
	for _, want := range []string{"set ANTHROPIC_API_KEY in this shell's environment", "aos run", "mission " + m[1]} {
		if !strings.Contains(r.out, want) {
			t.Errorf("the summary does not say %q:\n%s", want, r.out)
		}
	}
	for _, avoid := range []string{"worker", "retry ID"} {
		if strings.Contains(r.out, avoid) {
			t.Errorf("the summary says %q:\n%s", avoid, r.out)
		}
	}
}
