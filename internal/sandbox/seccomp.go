//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Offsets into struct seccomp_data (args are 64-bit; these are the low
// 32 bits on little-endian machines, which amd64 and arm64 are).
const (
	offNr   = 0
	offArch = 4
)

func offArg(i int) uint32 { return uint32(16 + 8*i) }

// setIDBits are the mode bits no command may set: a setuid/setgid file in
// the workspace would run with the worker's identity (root, when aos runs
// as root) if anyone on the host executed it.
const setIDBits = unix.S_ISUID | unix.S_ISGID

// createBits are the open flags that create a file with a mode.
const createBits = unix.O_CREAT | (unix.O_TMPFILE &^ unix.O_DIRECTORY)

// filter returns the classic BPF seccomp program for network n:
//   - a non-native architecture (and the x32 ABI) kills the process;
//   - socket(AF_UNIX, …) fails with EPERM, so no unix socket file or
//     abstract socket can be reached, even through a read-only mount;
//   - io_uring_setup/enter/register fail with EPERM (io_uring bypasses
//     socket filters);
//   - keyctl, add_key and request_key fail with EPERM (keyrings are keyed
//     by uid, and as root the sandbox uid maps to host root);
//   - chmod-like calls and creating opens whose mode has setuid or setgid
//     bits fail with EPERM; openat2 (whose mode seccomp cannot see) fails
//     with ENOSYS, so libc falls back to openat;
//   - under NetworkOpen, listen fails with EPERM unless listen is set
//     (Spec.Listen): no inbound listeners;
//   - everything else is allowed.
func filter(n Network, listen bool) []unix.SockFilter {
	var a asm
	a.load(offArch)
	a.jump(unix.BPF_JEQ, auditArch, "", "kill")
	a.load(offNr)
	if x32 {
		a.jump(unix.BPF_JGE, 0x40000000, "kill", "")
	}
	denied := []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
		unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY}
	if n == NetworkOpen && !listen {
		denied = append(denied, unix.SYS_LISTEN)
	}
	for _, nr := range denied {
		a.jump(unix.BPF_JEQ, nr, "eperm", "")
	}
	a.jump(unix.BPF_JEQ, unix.SYS_OPENAT2, "enosys", "")
	for i, c := range modeSyscalls() {
		a.jump(unix.BPF_JEQ, c.nr, fmt.Sprintf("mode%d", i), "")
	}
	a.jump(unix.BPF_JEQ, unix.SYS_SOCKET, "", "allow")
	a.load(offArg(0))
	a.jump(unix.BPF_JEQ, unix.AF_UNIX, "eperm", "allow")
	for i, c := range modeSyscalls() {
		a.label(fmt.Sprintf("mode%d", i))
		if c.flagsArg >= 0 {
			a.load(offArg(c.flagsArg))
			a.jump(unix.BPF_JSET, createBits, "", "allow")
		}
		a.load(offArg(c.modeArg))
		a.jump(unix.BPF_JSET, setIDBits, "eperm", "allow")
	}
	a.label("allow")
	a.ret(unix.SECCOMP_RET_ALLOW)
	a.label("eperm")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	a.label("enosys")
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	a.label("kill")
	a.ret(unix.SECCOMP_RET_KILL_PROCESS)
	prog, err := a.assemble()
	if err != nil {
		panic(err) // the program is fixed; a failure is a programming error
	}
	return prog
}

// modeSyscall is a syscall that sets a file mode: the mode's argument
// index, and the flags' index for opens (-1 when it always applies).
type modeSyscall struct {
	nr                uint32
	modeArg, flagsArg int
}

// encode serializes a program as the array of struct sock_filter that
// bwrap's --seccomp reads.
func encode(prog []unix.SockFilter) []byte {
	b := make([]byte, 0, 8*len(prog))
	for _, f := range prog {
		b = binary.NativeEndian.AppendUint16(b, f.Code)
		b = append(b, f.Jt, f.Jf)
		b = binary.NativeEndian.AppendUint32(b, f.K)
	}
	return b
}

// filterFile returns a sealed memfd holding the encoded filter, positioned
// at its start, for bwrap's --seccomp.
func filterFile(n Network, listen bool) (*os.File, error) {
	fd, err := unix.MemfdCreate("aos-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sandbox: memfd for seccomp filter: %w", err)
	}
	f := os.NewFile(uintptr(fd), "aos-seccomp")
	if _, err := f.Write(encode(filter(n, listen))); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("sandbox: write seccomp filter: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("sandbox: rewind seccomp filter: %w", err)
	}
	return f, nil
}
