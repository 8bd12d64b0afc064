//go:build linux

package sandbox_test

import (
	"io/fs"
	"syscall"

	"golang.org/x/sys/unix"
)

func ctime(fi fs.FileInfo) syscall.Timespec { return fi.Sys().(*syscall.Stat_t).Ctim }

func getxattr(p string) (string, error) {
	buf := make([]byte, 64)
	n, err := unix.Getxattr(p, "user.x", buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
