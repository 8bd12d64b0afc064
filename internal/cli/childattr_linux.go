package cli

import "syscall"

// childAttr puts a supervised child in its own process group (Ctrl-C
// reaches aos up, which stops the children in order) and has the kernel
// send it SIGTERM if aos up dies without stopping it (kill -9, a crash), so
// no orphaned server keeps the port or worker keeps claiming.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
