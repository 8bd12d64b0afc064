//go:build !linux

package cli

import "os"

// isTTY reports whether f is a character device; outside Linux aos makes
// no finer check (aos targets Linux first).
func isTTY(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
