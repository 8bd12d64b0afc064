//go:build linux

package soak

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that the soak leaves no goroutine behind: every process
// reader, inotify loop and timer goroutine ends with its test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
