package sqlite

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Nothing of a database's bus outlives it outside the data dir. The
// fallback directory under os.TempDir (see bus.go) is derived from the
// database path alone, so every process of one database shares it; it is
// removed when it empties: by the subscription whose socket was the last
// one in it, and by Close. A process killed with SIGKILL leaves its socket
// and the directory behind; sweepStaleBusDirs, run by Open, removes such
// directories of this user once none of their sockets has a live reader.

// busDirPrefix names the fallback directories under os.TempDir.
const busDirPrefix = "aos-events-"

// tidyBusDir removes dir if it is empty; a directory in use (a socket in
// it) or already gone is left as it is.
func tidyBusDir(dir string) {
	_ = syscall.Rmdir(dir) // ENOTEMPTY and ENOENT are the expected failures
}

// sweepStaleBusDirs removes, under tmp, every fallback bus directory of
// this user whose sockets all refuse a connection (their processes are
// gone), with those sockets. A directory with a live socket, of another
// user, with a mode others may enter, or holding anything but sockets is
// left alone. It returns how many directories it removed.
func sweepStaleBusDirs(tmp string) int {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, busDirPrefix) || len(name) != len(busDirPrefix)+16 || !e.IsDir() {
			continue
		}
		dir := filepath.Join(tmp, name)
		if privateDir(dir) != nil {
			continue
		}
		if sweepBusDir(dir) {
			removed++
		}
	}
	return removed
}

// sweepBusDir removes dir's dead sockets and then dir itself if nothing
// is left; it reports whether dir is gone.
func sweepBusDir(dir string) bool {
	socks, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, s := range socks {
		path := filepath.Join(dir, s.Name())
		if s.Type()&os.ModeSocket == 0 {
			return false // not ours to judge
		}
		fd, err := dial(path)
		if err == nil {
			_ = syscall.Close(fd)
			return false // a live reader
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			return false
		}
		_ = os.Remove(path)
	}
	return syscall.Rmdir(dir) == nil
}
