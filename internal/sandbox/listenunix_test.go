package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestListenUnixLongPath: a socket path longer than sockaddr_un holds (a
// deep TMPDIR) is still listened on at that path, accepts a connection,
// and its file is gone after Close; a short path is a plain listener.
func TestListenUnixLongPath(t *testing.T) {
	for _, depth := range []int{1, 8} {
		t.Run(fmt.Sprintf("depth%d", depth), func(t *testing.T) {
			dir := t.TempDir()
			for i := 0; i < depth; i++ {
				dir = filepath.Join(dir, strings.Repeat("d", 20))
			}
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "sock")
			if depth > 1 && len(path) <= maxSunPath {
				t.Fatalf("path %d bytes: not long enough for this test", len(path))
			}
			ln, err := listenUnix(path)
			if err != nil {
				t.Fatalf("listen on a %d-byte path: %v", len(path), err)
			}
			if fi, err := os.Lstat(path); err != nil || fi.Mode()&os.ModeSocket == 0 {
				t.Fatalf("no socket at %s: %v", path, err)
			}
			// Connect through the directory's descriptor too.
			d, err := os.OpenFile(dir, unix.O_PATH|unix.O_DIRECTORY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = d.Close() }()
			c, err := net.Dial("unix", fmt.Sprintf("/proc/self/fd/%d/sock", d.Fd()))
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			_ = c.Close()
			a, err := ln.Accept()
			if err != nil {
				t.Fatalf("accept: %v", err)
			}
			_ = a.Close()
			if err := ln.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Lstat(path); !os.IsNotExist(err) {
				t.Fatalf("socket file left after Close: %v", err)
			}
		})
	}
}
