package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/store/storetest"
)

// TestRunRefusesProjectsThatAreNotRepositoryTopLevels: `aos run --project`
// refuses a plain directory, a subdirectory of a repository and a
// directory whose .git is a symlink, with gitx's message, before it opens
// a mission.
func TestRunRefusesProjectsThatAreNotRepositoryTopLevels(t *testing.T) {
	t.Parallel()
	repo := t.TempDir()
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	sub := filepath.Join(repo, "sub")
	linked := t.TempDir()
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(repo, ".git"), filepath.Join(linked, ".git")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, dir, want string }{
		{"plain directory", t.TempDir(), "not the top level of a git repository"},
		{"subdirectory", sub, "not the top level of a git repository"},
		{".git symlink", linked, ".git must be a directory"},
		{"missing", filepath.Join(repo, "nope"), "cannot be resolved"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := localSession(t, storetest.New(t, "sqlite"), io.Discard, nil)
			_, err := s.create(context.Background(), runFlags{project: c.dir}, "objective")
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(ee.msg, c.want) {
				t.Fatalf("create in %s: %v; want exit 2 saying %q", c.dir, err, c.want)
			}
		})
	}
}
