//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_AARCH64

// x32: arm64 has one syscall table.
const x32 = false

func modeSyscalls() []modeSyscall {
	return []modeSyscall{
		{unix.SYS_FCHMOD, 1, -1}, {unix.SYS_FCHMODAT, 2, -1}, {unix.SYS_FCHMODAT2, 2, -1},
		{unix.SYS_MKNODAT, 2, -1}, {unix.SYS_OPENAT, 3, 2},
	}
}
