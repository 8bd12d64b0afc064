//go:build unix

package gitx

import (
	"os/exec"
	"syscall"
)

// ownGroup puts git in a process group of its own and makes cancellation
// kill the whole group, so that a timed-out git also stops the helpers it
// started (git-remote-https, ssh).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
