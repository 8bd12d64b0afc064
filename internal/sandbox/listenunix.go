package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// maxSunPath is the longest socket path bind takes: sockaddr_un's
// sun_path holds 108 bytes with the terminating NUL.
const maxSunPath = 107

// listenUnix listens on a Unix socket at path. A path longer than a
// socket address holds (a deep TMPDIR, such as a test's) is bound through
// its directory's descriptor, /proc/self/fd/N/NAME, which the kernel
// resolves like any path. The listener never unlinks its name on Close
// (the descriptor's number may name another file by then); the socket
// file is removed here, by its real path, when the listener closes.
func listenUnix(path string) (net.Listener, error) {
	if len(path) <= maxSunPath {
		return net.Listen("unix", path)
	}
	dir, err := os.OpenFile(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open the socket's directory: %w", err)
	}
	defer func() { _ = dir.Close() }()
	short := fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path))
	if len(short) > maxSunPath {
		return nil, fmt.Errorf("socket name %q is too long", filepath.Base(path))
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: short, Net: "unix"})
	if err != nil {
		return nil, err
	}
	ln.SetUnlinkOnClose(false)
	return &unlinkOnClose{UnixListener: ln, path: path}, nil
}

// unlinkOnClose removes a socket file by its real path when its listener
// closes.
type unlinkOnClose struct {
	*net.UnixListener
	path string
}

// Close closes the listener and removes its socket file.
func (l *unlinkOnClose) Close() error {
	err := l.UnixListener.Close()
	_ = os.Remove(l.path)
	return err
}
