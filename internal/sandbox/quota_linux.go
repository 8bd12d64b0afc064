//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// DiskUsage returns the bytes allocated on disk (st_blocks, so sparse
// files count what they really use) by roots and everything below them,
// each hard-linked inode once. Symlinks are not followed and other
// filesystems mounted below are not entered; paths in skip (such as the
// workspace's .git, which commands cannot write) are not counted. It stops
// early, returning a partial sum above stop, once the sum passes stop
// (stop <= 0: never). Entries that vanish during the walk are skipped; a
// directory that cannot be read (permissions, a path too long to open) is
// an error, so that a command cannot hide data from the quota.
//
// It opens one directory at a time and stats its entries relative to it
// (fstatat), about 3 µs per entry on an idle machine.
func DiskUsage(ctx context.Context, roots, skip []string, stop int64) (int64, error) {
	type inode struct{ dev, ino uint64 }
	seen := map[inode]bool{}
	skipped := map[string]bool{}
	for _, s := range skip {
		skipped[filepath.Clean(s)] = true
	}
	var total int64
	count := func(st *unix.Stat_t) bool {
		if k := (inode{uint64(st.Dev), uint64(st.Ino)}); !seen[k] {
			seen[k] = true
			total += int64(st.Blocks) * 512
		}
		return stop > 0 && total > stop
	}
	for _, root := range roots {
		var st unix.Stat_t
		if err := unix.Lstat(root, &st); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return total, fmt.Errorf("sandbox: measure disk use of %s: %w", root, err)
		}
		if count(&st) {
			return total, nil
		}
		dev := st.Dev
		stack := []string{root}
		for len(stack) > 0 {
			dir := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if err := ctx.Err(); err != nil {
				return total, err
			}
			subdirs, over, err := usageOfDir(dir, dev, skipped, count)
			if err != nil {
				return total, fmt.Errorf("sandbox: measure disk use of %s: %w", shortPath(dir), err)
			}
			if over {
				return total, nil
			}
			stack = append(stack, subdirs...)
		}
	}
	return total, nil
}

// usageOfDir counts dir's entries and returns its subdirectories on the
// same filesystem (dev), or over when count reported the sum past its stop.
func usageOfDir(dir string, dev uint64, skipped map[string]bool, count func(*unix.Stat_t) bool) ([]string, bool, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
			return nil, false, nil // replaced while walking
		}
		return nil, false, err
	}
	f := os.NewFile(uintptr(fd), dir)
	defer func() { _ = f.Close() }()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, false, err
	}
	var subdirs []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		if skipped[p] {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return nil, false, err
		}
		if count(&st) {
			return nil, true, nil
		}
		if st.Mode&unix.S_IFMT == unix.S_IFDIR && uint64(st.Dev) == dev {
			subdirs = append(subdirs, p)
		}
	}
	return subdirs, false, nil
}

// checkDisk measures the run's writable roots after a command and returns
// a *QuotaError when they are over Limits.MaxDisk.
func (s *Sandbox) checkDisk(ctx context.Context, p plan) *QuotaError {
	limit := s.cfg.Limits.MaxDisk
	if limit <= 0 {
		return nil
	}
	used, err := DiskUsage(ctx, []string{p.workspace, p.tmp, p.home}, []string{filepath.Join(p.workspace, ".git")}, limit)
	if err != nil && ctx.Err() == nil {
		// What cannot be measured counts as over: fail closed.
		return &QuotaError{Used: used, Limit: limit, Err: err}
	}
	if used <= limit {
		return nil
	}
	return &QuotaError{Used: used, Limit: limit}
}

// shortPath keeps an error about a (possibly hostile, very long) path short.
func shortPath(p string) string {
	if len(p) <= 160 {
		return p
	}
	return p[:100] + "…" + p[len(p)-50:]
}
