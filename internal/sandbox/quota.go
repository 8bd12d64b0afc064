package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
)

// QuotaError reports that a run's disk use is over its quota
// (Limits.MaxDisk): the model is told to free space.
type QuotaError struct {
	// Used is at least the bytes allocated under the measured roots; the
	// walk stops counting once it is past Limit.
	Used, Limit int64
}

// Error implements error.
func (e *QuotaError) Error() string {
	return fmt.Sprintf("sandbox: disk quota exceeded: the workspace, TMPDIR and HOME use more than %s (quota %s); delete files to continue",
		humanBytes(e.Used), humanBytes(e.Limit))
}

// DiskUsage returns the bytes allocated on disk (st_blocks, so sparse
// files count what they really use) by the files and directories below
// roots, each hard-linked inode once. Symlinks are not followed, and
// paths in skip (such as the workspace's .git, which commands cannot
// write) are not entered. It stops early, returning a partial sum above
// stop, once the sum passes stop (stop <= 0: never). Unreadable entries
// are skipped.
func DiskUsage(ctx context.Context, roots, skip []string, stop int64) (int64, error) {
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[filepath.Clean(s)] = true
	}
	var total int64
	errStop := errors.New("stop")
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // vanished or unreadable: not ours to count
			}
			if skipped[p] {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fi, err := d.Info()
			if err != nil {
				return nil
			}
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok {
				total += fi.Size()
			} else if k := (inode{uint64(st.Dev), uint64(st.Ino)}); !seen[k] {
				seen[k] = true
				total += int64(st.Blocks) * 512
			}
			if stop > 0 && total > stop {
				return errStop
			}
			return nil
		})
		if errors.Is(err, errStop) {
			return total, nil
		}
		if err != nil {
			return total, fmt.Errorf("sandbox: measure disk use of %s: %w", root, err)
		}
	}
	return total, nil
}

// checkDisk measures the run's writable roots after a command and returns
// a *QuotaError when they are over Limits.MaxDisk.
func (s *Sandbox) checkDisk(ctx context.Context, p plan) *QuotaError {
	limit := s.cfg.Limits.MaxDisk
	if limit <= 0 {
		return nil
	}
	used, err := DiskUsage(ctx, []string{p.workspace, p.tmp, p.home}, []string{filepath.Join(p.workspace, ".git")}, limit)
	if err != nil || used <= limit {
		return nil
	}
	return &QuotaError{Used: used, Limit: limit}
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
