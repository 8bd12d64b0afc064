package sandbox_test

import "golang.org/x/sys/unix"

func getxattr(p string) (string, error) {
	buf := make([]byte, 64)
	n, err := unix.Getxattr(p, "user.x", buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
