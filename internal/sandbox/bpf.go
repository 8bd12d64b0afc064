//go:build linux

package sandbox

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// asm assembles a classic BPF program with symbolic forward jumps.
type asm struct {
	prog   []unix.SockFilter
	labels map[string]int
	fixups []fixup
}

type fixup struct {
	at     int
	jt, jf string // "" means the next instruction
}

func (a *asm) stmt(code uint16, k uint32) {
	a.prog = append(a.prog, unix.SockFilter{Code: code, K: k})
}

// load loads the 32-bit word at offset off of struct seccomp_data.
func (a *asm) load(off uint32) { a.stmt(unix.BPF_LD|unix.BPF_W|unix.BPF_ABS, off) }

// ret returns k.
func (a *asm) ret(k uint32) { a.stmt(unix.BPF_RET|unix.BPF_K, k) }

// jump adds a conditional jump (BPF_JEQ, BPF_JGE or BPF_JSET against k).
func (a *asm) jump(op uint16, k uint32, jt, jf string) {
	a.fixups = append(a.fixups, fixup{at: len(a.prog), jt: jt, jf: jf})
	a.stmt(unix.BPF_JMP|op|unix.BPF_K, k)
}

func (a *asm) label(name string) {
	if a.labels == nil {
		a.labels = map[string]int{}
	}
	a.labels[name] = len(a.prog)
}

// assemble resolves the jumps; classic BPF jumps only forward, at most 255.
func (a *asm) assemble() ([]unix.SockFilter, error) {
	off := func(at int, l string) (uint8, error) {
		if l == "" {
			return 0, nil
		}
		to, ok := a.labels[l]
		if !ok {
			return 0, fmt.Errorf("sandbox: bpf: no label %q", l)
		}
		d := to - at - 1
		if d < 0 || d > 255 {
			return 0, fmt.Errorf("sandbox: bpf: jump to %q out of range (%d)", l, d)
		}
		return uint8(d), nil
	}
	for _, f := range a.fixups {
		var err error
		if a.prog[f.at].Jt, err = off(f.at, f.jt); err != nil {
			return nil, err
		}
		if a.prog[f.at].Jf, err = off(f.at, f.jf); err != nil {
			return nil, err
		}
	}
	return a.prog, nil
}
