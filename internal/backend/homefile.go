package backend

import (
	"fmt"
	"os"
	"path/filepath"
)

// writeBeneath writes data to dir/rel with mode 0600, opened beneath dir
// by the kernel (os.Root): the run's HOME and TMPDIR are writable by every
// sandboxed command of the run, so a symlink left there under rel (or
// under one of its parent dirs) must not redirect aos's write, on the host,
// to a file outside dir. Missing parent dirs of rel are made (0700).
func writeBeneath(dir, rel string, data []byte) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer root.Close()
	if parent := filepath.Dir(rel); parent != "." {
		if err := root.MkdirAll(parent, 0o700); err != nil {
			return fmt.Errorf("make %s: %w", parent, err)
		}
	}
	if err := root.WriteFile(rel, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return nil
}
