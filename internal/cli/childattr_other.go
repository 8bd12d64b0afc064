//go:build !linux

package cli

import "syscall"

// childAttr puts a supervised child in its own process group. Without
// Linux's parent-death signal, a child outlives an aos up killed with
// SIGKILL.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
