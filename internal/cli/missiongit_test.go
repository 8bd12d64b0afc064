package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/store/storetest"
)

// TestMissionCreateInAProjectSaysWhereTheWorkIs: a mission created in a
// project (with --include-uncommitted) records its base and snapshot, and
// mission show says which branch holds its work and how to look at and
// merge it.
func TestMissionCreateInAProjectSaysWhereTheWorkIs(t *testing.T) {
	r := setupRemote(t, storetest.New(t, "sqlite"))
	dir := r.gitRepo("proj")
	if err := os.WriteFile(filepath.Join(dir, "wip.txt"), []byte("wip\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := r.ok("mission", "create", "o", "--workspace", "proj", "--model", "claude-opus-5-5", "--include-uncommitted")
	id := regexp.MustCompile(`mission ([0-9a-f-]{36}) created`).FindStringSubmatch(out)
	if id == nil {
		t.Fatalf("create:\n%s", out)
	}
	out = r.ok("mission", "show", id[1])
	br := "aos/" + id[1][:8]
	for _, want := range []string{"branch    " + br + " (from ", "snapshot  ", "look      git log ", ".." + br, "merge     git merge " + br} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
}
