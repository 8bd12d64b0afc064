package mission

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMakeDirStaysInRootWhenLinksAreSwapped: a parent directory replaced
// by a symbolic link pointing outside the workspace root between the path
// check and the work (a mission's agent can write links in its own
// workspace) makes aos neither create nor, on undo, delete anything
// outside the root.
func TestMakeDirStaysInRootWhenLinksAreSwapped(t *testing.T) {
	swap := func(t *testing.T, dir, target string) {
		t.Helper()
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, dir); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("create", func(t *testing.T) {
		root, outside := t.TempDir(), t.TempDir()
		s := &Service{opts: Options{WorkspaceRoot: root}}
		if err := os.Mkdir(filepath.Join(root, "a"), 0o755); err != nil {
			t.Fatal(err)
		}
		pl, err := s.resolve("a/b/new", invalid("bad"))
		if err != nil {
			t.Fatal(err)
		}
		swap(t, filepath.Join(root, "a"), outside)
		if _, err := s.makeDir(pl); err == nil {
			t.Fatal("makeDir went through a link that now points outside the root")
		}
		if es, _ := os.ReadDir(outside); len(es) != 0 {
			t.Fatalf("created outside the root: %v", es)
		}
	})
	t.Run("undo", func(t *testing.T) {
		root, outside := t.TempDir(), t.TempDir()
		s := &Service{opts: Options{WorkspaceRoot: root}}
		if err := os.Mkdir(filepath.Join(root, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		pl, err := s.resolve("x/new", invalid("bad"))
		if err != nil {
			t.Fatal(err)
		}
		undo, err := s.makeDir(pl)
		if err != nil {
			t.Fatal(err)
		}
		keep := filepath.Join(outside, "new", "keep.txt")
		if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
		swap(t, filepath.Join(root, "x"), outside)
		undo()
		if _, err := os.Stat(keep); err != nil {
			t.Fatalf("undo deleted a file outside the root: %v", err)
		}
	})
}
