//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// slirp is the slirp4netns process that gives one NetworkOpen command
// outbound NAT from its own network namespace. --disable-host-loopback
// refuses connections to the host's 127.0.0.1 (and to the gateway
// address 10.0.2.2 that would map to it), so the command cannot reach
// aos's API, the model server or any other loopback-only service; no
// port is forwarded inward.
type slirp struct {
	cmd   *exec.Cmd
	exitW *os.File
}

// slirpReadyTimeout bounds how long slirp4netns may take to configure the
// namespace.
const slirpReadyTimeout = 10 * time.Second

func errNoSlirp() error {
	return &UnavailableError{
		Reason: "slirp4netns is not installed or not in PATH; network: open needs it to keep commands off the host's loopback services",
		Fix:    "install slirp4netns, e.g. `apt-get install -y slirp4netns`, or use network: none",
	}
}

// startSlirp attaches slirp4netns to the network namespace of pid (bwrap's
// child) and waits until tap0 is configured. It must run on the locked
// OS thread that started bwrap, so that Pdeathsig kills it with aos.
func (s *Sandbox) startSlirp(pid, blockFD int) (*slirp, error) {
	if err := tunUsable(); err != nil {
		return nil, err
	}
	// bwrap reports the child's pid before the child has set up its own
	// loopback; slirp4netns configuring the namespace at the same time
	// makes that setup fail. The child reads the block fd only once its
	// whole setup is done, so wait until it sits in that read.
	if err := waitBlockedRead(pid, blockFD, slirpReadyTimeout); err != nil {
		return nil, err
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: slirp ready pipe: %w", err)
	}
	defer func() { _ = readyR.Close() }()
	exitR, exitW, err := os.Pipe()
	if err != nil {
		_ = readyW.Close()
		return nil, fmt.Errorf("sandbox: slirp exit pipe: %w", err)
	}
	// --enable-seccomp limits slirp4netns's own syscalls; --enable-sandbox
	// (its own mount namespace, dropped capabilities) needs root.
	args := []string{"--configure", "--mtu=65520", "--disable-host-loopback",
		"--enable-seccomp", "--ready-fd=3", "--exit-fd=4"}
	extra := []*os.File{readyW, exitR}
	if os.Geteuid() == 0 {
		args = append(args, "--enable-sandbox")
	} else {
		// Unprivileged, slirp4netns must first join the user namespace
		// that owns the network namespace. With --disable-userns the
		// child sits in a nested one, so ask the kernel for the owner.
		owner, err := netnsOwner(pid)
		if err != nil {
			_ = readyW.Close()
			_ = exitR.Close()
			_ = exitW.Close()
			return nil, err
		}
		defer func() { _ = owner.Close() }()
		extra = append(extra, owner)
		args = append(args, "--userns-path=/proc/self/fd/5")
	}
	args = append(args, "--netns-type=path", "/proc/"+strconv.Itoa(pid)+"/ns/net", "tap0")
	cmd := exec.Command(s.cfg.SlirpPath, args...)
	cmd.Env = []string{}
	cmd.ExtraFiles = extra
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var out limitedBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Start()
	_ = readyW.Close()
	_ = exitR.Close()
	if err != nil {
		_ = exitW.Close()
		return nil, &UnavailableError{Reason: fmt.Sprintf("start slirp4netns: %v", err), Fix: "check that slirp4netns is installed and executable"}
	}
	sl := &slirp{cmd: cmd, exitW: exitW}
	ready := make(chan bool, 1)
	go func() {
		b := make([]byte, 1)
		n, _ := readyR.Read(b)
		ready <- n == 1
	}()
	timer := time.NewTimer(slirpReadyTimeout)
	defer timer.Stop()
	select {
	case ok := <-ready:
		if ok {
			return sl, nil
		}
	case <-timer.C:
	}
	sl.stop()
	return nil, &SetupError{Message: "slirp4netns did not configure the network namespace: " + strings.ReplaceAll(strings.TrimSpace(string(out.Bytes())), "\n", "; ")}
}

// tunUsable checks that this user may open /dev/net/tun, which
// slirp4netns needs (opening it creates nothing).
func tunUsable() error {
	f, err := os.OpenFile("/dev/net/tun", os.O_RDWR, 0)
	if err != nil {
		return &UnavailableError{Reason: fmt.Sprintf("network: open needs /dev/net/tun for slirp4netns: %v", err),
			Fix: "make /dev/net/tun readable and writable by aos's user (mode 0666 is the usual default), or use network: none"}
	}
	return f.Close()
}

// netnsOwner opens the user namespace that owns pid's network namespace.
func netnsOwner(pid int) (*os.File, error) {
	ns, err := os.Open("/proc/" + strconv.Itoa(pid) + "/ns/net")
	if err != nil {
		return nil, &SetupError{Message: fmt.Sprintf("open the sandbox's network namespace: %v", err)}
	}
	defer func() { _ = ns.Close() }()
	fd, err := unix.IoctlRetInt(int(ns.Fd()), unix.NS_GET_USERNS)
	if err != nil {
		return nil, &SetupError{Message: fmt.Sprintf("find the owner of the sandbox's network namespace: %v", err)}
	}
	return os.NewFile(uintptr(fd), "userns"), nil
}

// waitBlockedRead polls /proc/PID/syscall until pid is blocked in
// read(fd), the process is gone, or the timeout passes.
func waitBlockedRead(pid, fd int, timeout time.Duration) error {
	want := fmt.Sprintf("%d 0x%x ", unix.SYS_READ, fd)
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
		if err != nil {
			return &SetupError{Message: fmt.Sprintf("waiting for the sandbox to be set up: %v", err)}
		}
		last = string(b)
		if strings.HasPrefix(last, want) {
			return nil
		}
		if time.Now().After(deadline) {
			return &SetupError{Message: fmt.Sprintf("the sandbox was not set up within %v (last syscall %q)", timeout, strings.TrimSpace(last))}
		}
		time.Sleep(time.Millisecond) // bounded poll; bwrap's setup takes a few ms
	}
}

// stop ends slirp4netns and reaps it. A nil slirp is a no-op.
func (sl *slirp) stop() {
	if sl == nil {
		return
	}
	_ = sl.exitW.Close()
	_ = sl.cmd.Process.Kill()
	_ = sl.cmd.Wait()
}

// limitedBuffer keeps the first 4 KiB written to it; safe for concurrent
// use by os/exec's copying goroutines.
type limitedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if room := 4096 - len(b.buf); room > 0 {
		b.buf = append(b.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// Bytes returns a copy of what was kept.
func (b *limitedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf...)
}
