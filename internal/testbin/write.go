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
