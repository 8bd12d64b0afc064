//go:build linux && (amd64 || arm64)

package sandbox

import (
	"encoding/binary"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Offsets into struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16 // low 32 bits of args[0] on little-endian machines
)

// filter returns the classic BPF seccomp program for network n:
//   - a non-native architecture (and the x32 ABI) kills the process;
//   - socket(AF_UNIX, …) fails with EPERM, so no unix socket file or
//     abstract socket can be reached, even through a read-only mount;
//   - io_uring_setup/enter/register fail with EPERM (io_uring bypasses
//     socket filters);
//   - keyctl, add_key and request_key fail with EPERM (keyrings are keyed
//     by uid, and as root the sandbox uid maps to host root);
//   - under NetworkOpen, listen fails with EPERM: no inbound listeners;
//   - everything else is allowed.
func filter(n Network) []unix.SockFilter {
	stmt := func(code uint16, k uint32) unix.SockFilter { return unix.SockFilter{Code: code, K: k} }
	jeq := func(k uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, Jt: jt, Jf: jf, K: k}
	}
	eperm := unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
	denied := []uint32{unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
		unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY}
	if n == NetworkOpen {
		denied = append(denied, unix.SYS_LISTEN)
	}
	var prog []unix.SockFilter
	// Architecture check.
	prog = append(prog,
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArch),
		jeq(auditArch, 1, 0),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_KILL_PROCESS),
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offNr),
	)
	prog = append(prog, archGuard()...)
	// Denied syscalls: each jumps to the EPERM return at the end.
	// Layout after this block: [socket check (2)] [socket arg check (3)]
	// [allow] [eperm].
	for i, nr := range denied {
		// Instructions remaining after this one in the denied block, plus
		// the socket block (1 jeq + 1 ld + 1 jeq + 1 allow) = distance to eperm.
		rest := len(denied) - 1 - i
		prog = append(prog, jeq(nr, uint8(rest+4), 0))
	}
	prog = append(prog,
		jeq(unix.SYS_SOCKET, 0, 2), // not socket: jump to allow
		stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, offArg0),
		jeq(unix.AF_UNIX, 1, 0),
		stmt(unix.BPF_RET|unix.BPF_K, unix.SECCOMP_RET_ALLOW),
		stmt(unix.BPF_RET|unix.BPF_K, eperm),
	)
	return prog
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
func filterFile(n Network) (*os.File, error) {
	fd, err := unix.MemfdCreate("aos-seccomp", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("sandbox: memfd for seccomp filter: %w", err)
	}
	f := os.NewFile(uintptr(fd), "aos-seccomp")
	if _, err := f.Write(encode(filter(n))); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("sandbox: write seccomp filter: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("sandbox: rewind seccomp filter: %w", err)
	}
	return f, nil
}
