//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// initCtlFD is the init's end of the private control channel: a
// SOCK_SEQPACKET socketpair aos made, inherited as descriptor 5 (3 and 4
// are bwrap's seccomp filter and status pipe, 8 and 9 the lifeline's).
// No path names it, so nothing but this init and aos can reach it.
const initCtlFD = 5

// initMsg is one message on the control channel, either way.
//
//	aos → init: {"op":"run","argv":[…],"env":[…],"dir":"…"} with the
//	            command's output pipe as SCM_RIGHTS;
//	            {"op":"signal","sig":15} to the running command's group.
//	init → aos: {"op":"ready"} once, then {"op":"exit","code":N} per
//	            command, after everything it left is dead.
type initMsg struct {
	Op   string   `json:"op"`
	Argv []string `json:"argv,omitempty"`
	Env  []string `json:"env,omitempty"`
	Dir  string   `json:"dir,omitempty"`
	Sig  int      `json:"sig,omitempty"`
	Code int      `json:"code,omitempty"`
}

// maxInitMsg bounds one control message (argv and env of a command).
const maxInitMsg = 1 << 20

// InitMain is the warm sandbox's init: it runs inside bwrap, behind the
// lifeline and under the command rlimits (prlimit), and starts each
// command aos sends it on the control channel, one at a time, in its own
// session and process group. When a command's main process exits, it
// kills and reaps everything else in the sandbox's PID namespace (it is
// the namespace's child subreaper) before reporting the exit code. It
// exits when the channel closes. It returns the process exit code.
func InitMain([]string) int {
	// Nothing this init holds may reach a command: only stdin, stdout
	// and stderr are passed on.
	if err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		fmt.Fprintln(os.Stderr, "aos-init: close-on-exec:", err)
		return 125
	}
	// sweep's kill(-1) is safe only in the sandbox's own PID namespace,
	// where the init is pid 2 under bwrap's pid 1. Anywhere else it
	// would signal every process of the user: refuse to start.
	if os.Getpid() != 2 || os.Getppid() != 1 {
		fmt.Fprintf(os.Stderr, "aos-init: not in a sandbox's own PID namespace (pid %d, parent %d)\n", os.Getpid(), os.Getppid())
		return 125
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "aos-init: subreaper:", err)
		return 125
	}
	in := &initProc{ctl: initCtlFD, pidfd: -1}
	if err := in.send(initMsg{Op: "ready"}); err != nil {
		fmt.Fprintln(os.Stderr, "aos-init: ready:", err)
		return 125
	}
	in.serve()
	sweep()
	return 0
}

type initProc struct {
	ctl   int
	mu    sync.Mutex // guards pid
	pid   int        // the running command's pid (its process group), 0 if none
	pidfd int        // the running command's pidfd, polled by serve; -1 if none
}

func (in *initProc) send(m initMsg) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return unix.Sendmsg(in.ctl, b, nil, nil, unix.MSG_NOSIGNAL)
}

// serve reads requests until the channel closes. It waits in one thread
// for a request or the running command's exit (its pidfd), so that each
// costs one wakeup.
func (in *initProc) serve() {
	buf := make([]byte, maxInitMsg)
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		pfds := []unix.PollFd{{Fd: int32(in.ctl), Events: unix.POLLIN}}
		if in.pidfd >= 0 {
			pfds = append(pfds, unix.PollFd{Fd: int32(in.pidfd), Events: unix.POLLIN})
		}
		if _, err := unix.Poll(pfds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if len(pfds) > 1 && pfds[1].Revents != 0 {
			_ = unix.Close(in.pidfd)
			in.pidfd = -1
			in.reap()
		}
		if pfds[0].Revents == 0 {
			continue
		}
		n, oobn, _, _, err := unix.Recvmsg(in.ctl, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		fds := recvFDs(oob[:oobn])
		var m initMsg
		if err := json.Unmarshal(buf[:n], &m); err != nil {
			closeAll(fds)
			continue
		}
		switch m.Op {
		case "run":
			if len(fds) != 1 {
				closeAll(fds)
				continue
			}
			in.run(m, fds[0])
		case "signal":
			closeAll(fds)
			in.mu.Lock()
			if in.pid > 0 && m.Sig > 0 && m.Sig < 65 {
				_ = unix.Kill(-in.pid, syscall.Signal(m.Sig))
			}
			in.mu.Unlock()
		default:
			closeAll(fds)
		}
	}
}

// run starts one command with out as stdout and stderr, and reports its
// exit once it and everything it left behind are gone.
func (in *initProc) run(m initMsg, out int) {
	defer func() { _ = unix.Close(out) }()
	in.mu.Lock()
	busy := in.pid != 0
	in.mu.Unlock()
	if busy || len(m.Argv) == 0 {
		_ = in.send(initMsg{Op: "exit", Code: 125})
		return
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		fmt.Fprintf(os.NewFile(uintptr(out), "out"), "aos-init: open /dev/null: %v\n", err)
		_ = in.send(initMsg{Op: "exit", Code: 125})
		return
	}
	defer func() { _ = null.Close() }()
	path, code := lookPathIn(m.Argv[0], m.Env)
	var pid int
	if code == 0 {
		pid, err = syscall.ForkExec(path, m.Argv, &syscall.ProcAttr{Dir: m.Dir, Env: m.Env,
			Files: []uintptr{null.Fd(), uintptr(out), uintptr(out)},
			Sys:   &syscall.SysProcAttr{Setsid: true}})
		if err != nil {
			code = 126
			if errors.Is(err, unix.ENOENT) {
				code = 127
			}
		}
	}
	if code != 0 {
		// As the shell reports a command it cannot run.
		msg := fmt.Sprintf("aos-init: %s: %v\n", m.Argv[0], err)
		if err == nil {
			msg = fmt.Sprintf("aos-init: %s: not found\n", m.Argv[0])
		}
		_, _ = unix.Write(out, []byte(msg))
		_ = in.send(initMsg{Op: "exit", Code: code})
		return
	}
	_ = unix.Close(out)
	out = -1
	in.mu.Lock()
	in.pid = pid
	in.mu.Unlock()
	if fd, err := unix.PidfdOpen(pid, 0); err == nil {
		in.pidfd = fd // serve polls it
		return
	}
	go in.reap() // kernels before 5.3: wait in a thread of its own
}

// reap waits for the running command, kills and reaps what it left, and
// reports its exit code.
func (in *initProc) reap() {
	in.mu.Lock()
	pid := in.pid
	in.mu.Unlock()
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	code := ws.ExitStatus()
	if ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	sweep()
	in.mu.Lock()
	in.pid = 0
	in.mu.Unlock()
	_ = in.send(initMsg{Op: "exit", Code: code})
}

// sweep kills every other process of the sandbox's PID namespace (kill(-1)
// spares only its pid 1, bwrap, and the caller) and reaps them: as child
// subreaper, the init inherits every orphan. It returns once none is left.
func sweep() {
	for {
		err := unix.Kill(-1, unix.SIGKILL)
		for {
			_, werr := unix.Wait4(-1, nil, 0, nil)
			if errors.Is(werr, unix.ECHILD) {
				break
			}
		}
		if errors.Is(err, unix.ESRCH) {
			return
		}
	}
}

// lookPathIn finds name in the PATH of env, as the shell's exec would.
// It returns 127 when there is none.
func lookPathIn(name string, env []string) (string, int) {
	if strings.Contains(name, "/") {
		return name, 0
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, 0
		}
	}
	return "", 127
}

func recvFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if f, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, f...)
		}
	}
	return fds
}

func closeAll(fds []int) {
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
}
