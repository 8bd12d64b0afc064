package tool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Temp files of the atomic writes. They live in the workspace's
// .git/aos-tmp/ when .git is a real directory: git never tracks anything
// under .git, the sandboxed shell sees .git read-only, and it is on the
// same filesystem as the worktree, so the final rename stays atomic. A
// crash between creating a temp file and renaming it leaves debris only
// there, swept once it is older than tempStaleAfter. Without a .git
// directory (or across filesystems) the temp file is made next to its
// target (also when .git/aos-tmp refuses the file), as before, and stale
// ones there are swept the same way.
const (
	tempDirName    = "aos-tmp"
	tempPrefix     = ".aos-write-"
	tempStaleAfter = 10 * time.Minute
)

// errTempCreate marks a temp file that could not be created.
var errTempCreate = errors.New("create temp file")

// tempDir opens .git/aos-tmp beneath the workspace, following no symlink,
// making it if needed; nil when .git is not a real directory.
func (w *workspace) tempDir() *os.File {
	gitfd, err := unix.Openat(int(w.dir.Fd()), ".git", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer func() { _ = unix.Close(gitfd) }()
	if err := unix.Mkdirat(gitfd, tempDirName, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil
	}
	fd, err := unix.Openat(gitfd, tempDirName, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	return os.NewFile(uintptr(fd), ".git/"+tempDirName)
}

// writeAtomic replaces base in dir (opened by openDir) with data: a temp
// file is written, given mode, synced, then renamed over base. Nothing
// follows a symlink: the temp file is created O_EXCL|O_NOFOLLOW and the
// rename is relative to both directories' descriptors.
func (w *workspace) writeAtomic(dir *os.File, base string, data []byte, mode os.FileMode) error {
	if tmp := w.tempDir(); tmp != nil {
		defer func() { _ = tmp.Close() }()
		sweepStale(tmp)
		err := writeVia(tmp, dir, base, data, mode)
		// Another filesystem, or a temp dir that refuses files (read-only,
		// no permission): the target's own directory will do.
		if !errors.Is(err, unix.EXDEV) && !errors.Is(err, errTempCreate) {
			return err
		}
	}
	sweepStale(dir)
	return writeVia(dir, dir, base, data, mode)
}

// writeVia writes data to a new temp file in tmp and renames it to base
// in dir.
func writeVia(tmp, dir *os.File, base string, data []byte, mode os.FileMode) error {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	name := tempPrefix + hex.EncodeToString(rnd[:])
	fd, err := unix.Openat(int(tmp.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("%w: %w", errTempCreate, err)
	}
	f := os.NewFile(uintptr(fd), name)
	renamed := false
	defer func() {
		if !renamed {
			_ = unix.Unlinkat(int(tmp.Fd()), name, 0)
		}
	}()
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
	if err := unix.Renameat(int(tmp.Fd()), name, int(dir.Fd()), base); err != nil {
		return fmt.Errorf("rename into place: %w", err)
	}
	renamed = true
	_ = dir.Sync() // make the rename durable before the journal records it
	return nil
}

// sweepStale removes temp files in dir older than tempStaleAfter: debris
// of a process killed between creating a temp file and renaming it.
// Younger ones may belong to a write in progress and are kept.
func sweepStale(dir *os.File) {
	fd, err := unix.Openat(int(dir.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	d := os.NewFile(uintptr(fd), dir.Name())
	defer func() { _ = d.Close() }()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return
	}
	for _, n := range names {
		if !strings.HasPrefix(n, tempPrefix) {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		if time.Since(time.Unix(st.Mtim.Unix())) > tempStaleAfter {
			_ = unix.Unlinkat(fd, n, 0)
		}
	}
}
