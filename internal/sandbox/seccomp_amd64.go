//go:build linux

package sandbox

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_X86_64

// x32: x32-ABI syscalls (nr with bit 30 set) share the x86_64 audit arch
// but are a separate syscall table, so the filter kills them.
const x32 = true

func modeSyscalls() []modeSyscall {
	return []modeSyscall{
		{unix.SYS_CHMOD, 1, -1}, {unix.SYS_FCHMOD, 1, -1}, {unix.SYS_FCHMODAT, 2, -1}, {unix.SYS_FCHMODAT2, 2, -1},
		{unix.SYS_MKNOD, 1, -1}, {unix.SYS_MKNODAT, 2, -1}, {unix.SYS_CREAT, 1, -1},
		{unix.SYS_OPEN, 2, 1}, {unix.SYS_OPENAT, 3, 2},
	}
}
