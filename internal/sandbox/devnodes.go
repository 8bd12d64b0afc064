//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// devNodes are the device nodes a command gets when aos runs as root.
var devNodes = []struct {
	name         string
	major, minor uint32
}{
	{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8}, {"urandom", 1, 9}, {"tty", 5, 0},
}

// devNodeOwner owns the private device nodes. When bwrap runs as root the
// sandbox uid maps to host uid 0, so every root-owned inode on a writable
// mount is the command's own: with `--dev /dev` it could chmod or touch the
// host's /dev/null. Nodes owned by an unmapped uid cannot be changed.
const devNodeOwner = 65534

// ensureDevNodes makes (or verifies) stateDir/dev holding devNodes owned by
// devNodeOwner with mode 0666, and returns that dir. It needs root.
func ensureDevNodes(stateDir string) (string, error) {
	dir := filepath.Join(stateDir, "dev")
	if devNodesOK(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		return "", fmt.Errorf("sandbox: make state dir: %w", err)
	}
	tmp, err := os.MkdirTemp(stateDir, "dev.tmp-")
	if err != nil {
		return "", fmt.Errorf("sandbox: make device dir: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("sandbox: chmod device dir: %w", err)
	}
	for _, n := range devNodes {
		p := filepath.Join(tmp, n.name)
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(n.major, n.minor))); err != nil {
			return "", &UnavailableError{Reason: fmt.Sprintf("create private device node %s: %v", p, err),
				Fix: "run aos as root on a filesystem that allows device nodes, or set the sandbox state dir"}
		}
		if err := os.Chown(p, devNodeOwner, devNodeOwner); err != nil {
			return "", fmt.Errorf("sandbox: chown device node: %w", err)
		}
		if err := os.Chmod(p, 0o666); err != nil {
			return "", fmt.Errorf("sandbox: chmod device node: %w", err)
		}
	}
	// Another process may have installed a good dir meanwhile; a dir in use
	// is never removed (only a bad one is replaced).
	if err := os.Rename(tmp, dir); err != nil {
		if devNodesOK(dir) {
			return dir, nil
		}
		_ = os.RemoveAll(dir)
		if err := os.Rename(tmp, dir); err != nil && !devNodesOK(dir) {
			return "", fmt.Errorf("sandbox: install device dir: %w", err)
		}
	}
	if !devNodesOK(dir) {
		return "", fmt.Errorf("sandbox: device dir %s failed verification", dir)
	}
	return dir, nil
}

// devNodesOK verifies every node's type, number, owner and mode.
func devNodesOK(dir string) bool {
	for _, n := range devNodes {
		var st unix.Stat_t
		if err := unix.Lstat(filepath.Join(dir, n.name), &st); err != nil {
			return false
		}
		if st.Mode&unix.S_IFMT != unix.S_IFCHR || st.Mode&0o7777 != 0o666 ||
			st.Rdev != unix.Mkdev(n.major, n.minor) || st.Uid != devNodeOwner || st.Gid != devNodeOwner {
			return false
		}
	}
	return true
}
