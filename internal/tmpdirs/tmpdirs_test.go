package tmpdirs

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSweep removes only this user's private, stale directories of the
// prefix, a tree only when asked, and never follows a link out.
func TestSweep(t *testing.T) {
	now := time.Now()
	old := now.Add(-2 * StaleAfter)
	outside := filepath.Join(t.TempDir(), "keep.txt")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		name   string
		mode   os.FileMode
		when   time.Time
		files  bool // holds a file and a link to a file outside
		link   bool // a symlink to a directory, not a directory
		prefix string
		tree   bool
		gone   bool
	}
	for _, c := range []entry{
		{name: GitHome + "123", mode: 0o700, when: old, prefix: GitHome, gone: true},
		{name: GitHome + "124", mode: 0o700, when: old, files: true, prefix: GitHome},
		{name: GitHome + "125", mode: 0o700, when: now, prefix: GitHome},
		{name: GitHome + "126", mode: 0o755, when: old, prefix: GitHome},
		{name: GitHome + "x1", mode: 0o700, when: old, prefix: GitHome},
		{name: Probe + "200", mode: 0o700, when: old, files: true, prefix: Probe, tree: true, gone: true},
		{name: Probe + "201", mode: 0o700, when: now, files: true, prefix: Probe, tree: true},
		{name: Probe + "300", link: true, when: old, prefix: Probe, tree: true},
		{name: ProbeOpen + "400", mode: 0o700, when: old, prefix: Probe, tree: true},
		{name: ProbeOpen + "401", mode: 0o700, when: old, prefix: ProbeOpen, tree: true, gone: true},
		{name: "other-500", mode: 0o700, when: old, prefix: "other-", tree: true, gone: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			dir := filepath.Join(tmp, c.name)
			if c.link {
				target := t.TempDir()
				if err := os.Symlink(target, dir); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.Mkdir(dir, c.mode); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(dir, c.mode); err != nil { // past the umask
					t.Fatal(err)
				}
				if c.files {
					if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
						t.Fatal(err)
					}
					if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.Chtimes(dir, c.when, c.when); err != nil {
					t.Fatal(err)
				}
			}
			want := 0
			if c.gone {
				want = 1
			}
			if n := Sweep(tmp, c.prefix, c.tree, now); n != want {
				t.Errorf("removed %d, want %d", n, want)
			}
			if _, err := os.Lstat(dir); os.IsNotExist(err) != c.gone {
				t.Errorf("%s gone = %v, want %v", c.name, os.IsNotExist(err), c.gone)
			}
			if b, err := os.ReadFile(outside); err != nil || string(b) != "x" {
				t.Errorf("the file outside, linked from the tree: %q %v", b, err)
			}
		})
	}
}
