package tool

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
)

// sum is the hex sha256 of b.
func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// stale reports a model-visible message when rel changed since this run
// last read or wrote it. With tracking off (nil FileState) it never does.
func stale(tc *Context, rel string, current []byte, exists bool) string {
	if tc.FileState == nil {
		return ""
	}
	last, seen := tc.FileState[rel]
	switch {
	case !seen && exists:
		return fmt.Sprintf("%s exists but this run has not read it yet: read_file it first, then edit", rel)
	case seen && !exists:
		return fmt.Sprintf("%s was deleted since this run last read it", rel)
	case seen && last != sum(current):
		return fmt.Sprintf("%s changed since this run last read or wrote it: read_file it again before editing", rel)
	}
	return ""
}

// writeAtomic writes data to path through a temp file in the same dir and
// a rename, keeping an existing file's mode.
func writeAtomic(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("make parent dirs: %w", err)
	}
	f, err := os.CreateTemp(dir, ".aos-write-*")
	if err != nil {
		return fmt.Errorf("create temp file: %w", err)
	}
	tmp := f.Name()
	defer func() { _ = os.Remove(tmp) }()
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("write temp file: %w", err)
	}
	if err := f.Chmod(mode); err != nil {
		_ = f.Close()
		return fmt.Errorf("chmod temp file: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return fmt.Errorf("sync temp file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close temp file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	return nil
}
