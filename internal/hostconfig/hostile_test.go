package hostconfig_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/hostconfig"
)

// TestRepoFileHostile: the repository's config file is what a merged
// branch may have turned into a symlink to a secret or a FIFO. aos refuses
// both at once, with a typed error that carries nothing of the target;
// the owner's own file may be a symlink (dotfile managers), and a regular
// repository file still loads (the positive control).
func TestRepoFileHostile(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(secret, []byte("version: 1\ndefaults: {model: SECRET-CANARY-91f2}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, path string)
	}{
		{"symlink to a secret", func(t *testing.T, path string) {
			if err := os.Symlink(secret, path); err != nil {
				t.Fatal(err)
			}
		}},
		{"fifo", func(t *testing.T, path string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setup(t, "", "")
			path := filepath.Join(b.root, hostconfig.RepoPath)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			tc.plant(t, path)
			done := make(chan error, 1)
			go func() { _, err := hostconfig.Load(b.root, b.user); done <- err }()
			select {
			case err := <-done:
				var he *hostconfig.Error
				if !errors.As(err, &he) || strings.Contains(err.Error(), "SECRET-CANARY") {
					t.Fatalf("Load = %v, want a typed refusal without the target's content", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Load blocked on the repository's config file")
			}
		})
	}
	t.Run("owner's file may be a symlink", func(t *testing.T) {
		b := setup(t, repoYAML, "")
		real := filepath.Join(t.TempDir(), "dotfiles", "config.yaml")
		write(t, real, "version: 1\noverrides: {defaults: {effort: max}}\n")
		if err := os.MkdirAll(filepath.Dir(b.user), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(real, b.user); err != nil {
			t.Fatal(err)
		}
		if _, err := hostconfig.Load(b.root, b.user); err != nil {
			t.Fatalf("a symlinked user file and a regular repo file: %v", err)
		}
	})
}
