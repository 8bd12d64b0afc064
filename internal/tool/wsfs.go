package tool

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// The file tools never open a workspace path by its absolute name: a
// concurrent process (another mission's shell on the same workspace) can
// swap a directory for a symlink between a check and a use. Instead:
//   - reads go through an os.Root on the workspace: the kernel resolves
//     every component beneath it, following only symlinks that stay inside;
//   - writes walk from the workspace's descriptor one component at a time
//     with O_NOFOLLOW (openat/mkdirat/renameat), so they follow no symlink
//     at all and the path checked for protection is the path written;
//   - every file is opened O_NONBLOCK and fstat'ed: anything that is not a
//     regular file (a FIFO, a device, a socket) is refused, so none can
//     block the worker.

// fileToolMaxBytes caps what write_file and edit_file read of an existing
// file (its pre-image).
const fileToolMaxBytes = 16 << 20

// workspace is an open workspace.
type workspace struct {
	root *os.Root
	dir  *os.File // the workspace directory itself, for *at calls
	real string   // its real path, to name what a read reached
}

// openWorkspace opens ws (an absolute, owner-given path) for the file
// tools. The caller closes it.
func openWorkspace(ws string) (*workspace, error) {
	if !filepath.IsAbs(ws) {
		return nil, fmt.Errorf("tool: workspace %q is not absolute", ws)
	}
	root, err := os.OpenRoot(ws)
	if err != nil {
		return nil, fmt.Errorf("tool: open workspace: %w", err)
	}
	dir, err := root.Open(".")
	if err != nil {
		_ = root.Close()
		return nil, fmt.Errorf("tool: open workspace: %w", err)
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		real = ws
	}
	return &workspace{root: root, dir: dir, real: real}, nil
}

// Close releases the workspace's descriptors.
func (w *workspace) Close() error {
	return errors.Join(w.dir.Close(), w.root.Close())
}

// relName turns a model-given path into a clean workspace-relative name
// ("." for the workspace itself). Absolute paths must name a place inside
// the workspace by one of its spellings; ".." may not climb out.
func relName(ws, p string) (string, error) {
	switch {
	case p == "":
		return "", &PathError{Path: p, Reason: "empty path"}
	case strings.ContainsRune(p, 0):
		return "", &PathError{Path: p, Reason: "contains a NUL byte"}
	}
	c := filepath.Clean(p)
	if filepath.IsAbs(c) {
		rel, ok := under(ws, c)
		if !ok {
			if real, err := filepath.EvalSymlinks(ws); err == nil {
				rel, ok = under(real, c)
			}
		}
		if !ok {
			return "", &PathError{Path: p, Reason: "is outside the workspace; use a path relative to the workspace"}
		}
		c = rel
	}
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", &PathError{Path: p, Reason: "escapes the workspace"}
	}
	return c, nil
}

// under returns p relative to root when p is root or below it.
func under(root, p string) (string, bool) {
	root = strings.TrimSuffix(root, "/")
	switch {
	case p == root:
		return ".", true
	case strings.HasPrefix(p, root+"/"):
		return p[len(root)+1:], true
	}
	return "", false
}

// pathErr turns an error from opening p into a model-readable PathError.
func pathErr(p string, err error) error {
	var errno syscall.Errno
	reason := err.Error()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		reason = "no such file or directory"
	case strings.Contains(reason, "path escapes from parent"):
		reason = "leads outside the workspace (through a symlink or ..)"
	case errors.Is(err, syscall.ELOOP):
		reason = "goes through a symlink: file tools write only to real paths, never through a symlink"
	case errors.Is(err, syscall.ENOTDIR):
		reason = "a component of the path is not a directory"
	case errors.As(err, &errno):
		reason = errno.Error()
	default:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			reason = pe.Err.Error()
		}
	}
	return &PathError{Path: p, Reason: reason}
}

// notRegular is the refusal for anything but a regular file.
func notRegular(p string, m fs.FileMode) error {
	kind := "not a regular file"
	switch {
	case m.IsDir():
		kind = "a directory"
	case m&fs.ModeNamedPipe != 0:
		kind = "a FIFO (named pipe)"
	case m&fs.ModeSocket != 0:
		kind = "a socket"
	case m&fs.ModeDevice != 0:
		kind = "a device"
	}
	return &PathError{Path: p, Reason: "is " + kind + "; file tools read and write regular files only"}
}

// tooLargeError reports a file over a read cap.
type tooLargeError struct {
	Path      string
	Size, Max int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes; at most %d can be read", e.Path, e.Size, e.Max)
}

// open opens rel beneath the workspace (following symlinks that stay
// inside) without blocking, whatever it is: a FIFO opens at once, and the
// caller fstat's it before reading.
func (w *workspace) open(rel string) (*os.File, error) {
	return w.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
}

// readRegular reads rel (following symlinks that stay inside) if it is a
// regular file of at most max bytes. It also returns the path the file
// really has, relative to the workspace, when the kernel can name it.
func (w *workspace) readRegular(rel string, max int64) ([]byte, string, error) {
	f, err := w.open(rel)
	if err != nil {
		return nil, "", pathErr(rel, err)
	}
	defer func() { _ = f.Close() }()
	data, err := readOpened(f, rel, max)
	if err != nil {
		return nil, "", err
	}
	return data, w.realRel(f, rel), nil
}

// readOpened fstat's an open file, refuses anything but a regular file,
// and reads at most max bytes of it.
func readOpened(f *os.File, rel string, max int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, pathErr(rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, notRegular(rel, fi.Mode())
	}
	if fi.Size() > max {
		return nil, &tooLargeError{Path: rel, Size: fi.Size(), Max: max}
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, pathErr(rel, err)
	}
	if int64(len(data)) > max {
		return nil, &tooLargeError{Path: rel, Size: int64(len(data)), Max: max}
	}
	return data, nil
}

// realRel names where an open file really is, relative to the workspace
// (a read through an inside symlink reports its target), or fallback.
func (w *workspace) realRel(f *os.File, fallback string) string {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || strings.HasSuffix(p, " (deleted)") {
		return fallback
	}
	if rel, ok := under(w.real, p); ok {
		return rel
	}
	return fallback
}

// openDir opens the directory rel beneath the workspace following no
// symlink, one component at a time; with create, missing components are
// made (0755). The caller closes it.
func (w *workspace) openDir(rel string, create bool) (*os.File, error) {
	fd, err := unix.Openat(int(w.dir.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("tool: open workspace: %w", err)
	}
	if rel != "." {
		for _, c := range strings.Split(rel, "/") {
			next, err := openChildDir(fd, c, create)
			_ = unix.Close(fd)
			if err != nil {
				return nil, &os.PathError{Op: "openat", Path: rel, Err: err}
			}
			fd = next
		}
	}
	return os.NewFile(uintptr(fd), path.Join(w.real, rel)), nil
}

func openChildDir(dirfd int, name string, create bool) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(dirfd, name, flags, 0)
	if errors.Is(err, unix.ENOENT) && create {
		if err := unix.Mkdirat(dirfd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, err
		}
		fd, err = unix.Openat(dirfd, name, flags, 0)
	}
	if errors.Is(err, unix.ENOTDIR) {
		// O_DIRECTORY|O_NOFOLLOW on a symlink says ENOTDIR: name it.
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			err = unix.ELOOP
		}
	}
	return fd, err
}

// preImage is what a write target held before the write.
type preImage struct {
	data   []byte
	exists bool
	mode   os.FileMode
}

// symlinkRefusal refuses a write whose path goes through a symlink, and
// names the real path when a read can find it (a hint only: the write
// itself never follows the link).
func (w *workspace) symlinkRefusal(p, rel string) error {
	reason := "goes through a symlink: file tools write only to real paths, never through a symlink"
	for dir, rest := rel, ""; ; {
		if f, err := w.open(dir); err == nil {
			real := w.realRel(f, "")
			_ = f.Close()
			if real != "" && real != dir {
				reason += "; the real path is " + path.Join(real, rest)
			}
			break
		}
		if dir == "." {
			break
		}
		rest, dir = path.Join(path.Base(dir), rest), path.Dir(dir)
	}
	return &PathError{Path: p, Reason: reason}
}

// readTarget reads the file base in dir without following a symlink: a
// symlink, a directory or any non-regular file is refused.
func (w *workspace) readTarget(dir *os.File, base, rel string) (preImage, error) {
	fd, err := unix.Openat(int(dir.Fd()), base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ENOENT):
		return preImage{mode: 0o644}, nil
	case errors.Is(err, unix.ELOOP):
		return preImage{}, w.symlinkRefusal(rel, rel)
	case err != nil:
		return preImage{}, pathErr(rel, err)
	}
	f := os.NewFile(uintptr(fd), rel)
	defer func() { _ = f.Close() }()
	data, err := readOpened(f, rel, fileToolMaxBytes)
	if err != nil {
		return preImage{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		return preImage{}, pathErr(rel, err)
	}
	return preImage{data: data, exists: true, mode: fi.Mode().Perm()}, nil
}
