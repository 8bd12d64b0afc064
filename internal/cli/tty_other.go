//go:build !linux

package cli

import (
	"errors"
	"os"
)

// isTTY reports whether f is a character device; outside Linux aos makes
// no finer check (aos targets Linux first).
func isTTY(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// readSecret is not supported outside Linux: the interactive login needs
// a terminal without echo, so use aos login --token-stdin.
func readSecret(*os.File) (string, error) {
	return "", errors.New("interactive login needs Linux; use aos login --token-stdin")
}
