package testbin

import (
	"os"
	"syscall"
	"testing"
)

// WriteExecutable writes data to path with mode 0755, for a test that then
// executes it. A child forked while the file is open for writing (by a
// parallel test: exec.Command) inherits that descriptor until its own
// exec, and an exec of the file meanwhile fails with ETXTBSY, "text file
// busy" (golang.org/issue/22315). WriteExecutable holds syscall.ForkLock
// for reading from the open to the close, and every fork of this process
// takes it for writing, so no child can inherit the descriptor.
func WriteExecutable(t testing.TB, path string, data []byte) {
	t.Helper()
	syscall.ForkLock.RLock()
	err := os.WriteFile(path, data, 0o755)
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatalf("write executable %s: %v", path, err)
	}
}

// CopyExecutable copies the file at from to path with mode 0755, holding
// syscall.ForkLock as WriteExecutable does, for a test that then executes
// the copy (a copy of the test binary run as another user, say).
func CopyExecutable(t testing.TB, path, from string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatalf("copy executable %s: %v", from, err)
	}
	WriteExecutable(t, path, data)
}
