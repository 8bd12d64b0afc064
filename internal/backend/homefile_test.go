package backend

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWriteBeneathRefusesSymlinks: a symlink a sandboxed command left in
// the run's HOME, at the file or at a parent dir, does not redirect aos's
// write outside HOME; the outside file stays as it was. A plain write is
// the positive control.
func TestWriteBeneathRefusesSymlinks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, rel string
		plant     func(home, outside string) error
	}{
		{"file symlink", "aos-openclaw.json", func(home, outside string) error {
			return os.Symlink(filepath.Join(outside, "bashrc"), filepath.Join(home, "aos-openclaw.json"))
		}},
		{"parent dir symlink", ".codex/config.toml", func(home, outside string) error {
			return os.Symlink(outside, filepath.Join(home, ".codex"))
		}},
		{"absolute parent escape", ".codex/config.toml", func(home, outside string) error {
			if err := os.Mkdir(filepath.Join(home, ".codex"), 0o700); err != nil {
				return err
			}
			return os.Symlink(filepath.Join(outside, "bashrc"), filepath.Join(home, ".codex", "config.toml"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			home, outside := t.TempDir(), t.TempDir()
			victim := filepath.Join(outside, "bashrc")
			if err := os.WriteFile(victim, []byte("ORIGINAL"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(outside, "config.toml"), []byte("ORIGINAL"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := c.plant(home, outside); err != nil {
				t.Fatal(err)
			}
			if err := writeBeneath(home, c.rel, []byte("SECRET-CONFIG")); err == nil {
				t.Errorf("write through a planted symlink succeeded")
			}
			for _, f := range []string{victim, filepath.Join(outside, "config.toml")} {
				if b, _ := os.ReadFile(f); string(b) != "ORIGINAL" {
					t.Errorf("%s outside HOME was changed: %q", f, b)
				}
			}
		})
	}
	t.Run("plain", func(t *testing.T) {
		home := t.TempDir()
		if err := writeBeneath(home, ".codex/config.toml", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(filepath.Join(home, ".codex", "config.toml")); err != nil || string(b) != "x" {
			t.Fatalf("read back %q %v", b, err)
		}
	})
}
