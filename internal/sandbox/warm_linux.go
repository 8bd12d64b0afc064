//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// warmStartTimeout bounds the init's start (bwrap, lifeline, "ready").
const warmStartTimeout = 30 * time.Second

// warmBox is one running warm sandbox: bwrap (inside the run's cgroup
// when one is usable), its pid 1 and the init.
type warmBox struct {
	key      string
	ctl      *os.File      // aos's end of the control channel
	ctlFD    int           // its descriptor, read by readMsgs until readDone
	quit     chan struct{} // closed by stop: readMsgs stops forwarding
	readDone chan struct{} // closed when readMsgs returns
	bwrap    int           // host pid of bwrap (or its cgroup launcher, which execs it)
	child    int           // host pid of bwrap's child: pid 1 of the sandbox
	job      *cgroupJob    // nil without cgroups
	exited   chan struct{} // closed once bwrap has been reaped
	msgs     chan initMsg  // from the init; closed when the channel ends
	output   chan []byte   // the init's and bwrap's own output, at the end
	cleanup  func()        // the plan's
	broken   bool          // torn down or unusable: the next command starts a new box
	stopped  bool
}

// runLocked runs spec in the box, starting or replacing it as needed.
// w.mu is held.
func (w *Warm) runLocked(ctx context.Context, spec Spec) (Outcome, error) {
	argv := commandArgv(spec)
	keySpec := spec
	keySpec.Argv, keySpec.Command = keyArgv, ""
	p, cleanup, err := w.s.plan(keySpec)
	if err != nil {
		return Outcome{}, err
	}
	defer cleanup()
	if w.s.cfg.BwrapPath == "" {
		return Outcome{}, errNoBwrap()
	}
	if p.exposedElsewhere(argv[0]) {
		return w.s.run(ctx, spec)
	}
	key := p.mountKey()
	if w.box != nil && (w.box.broken || w.box.key != key || w.box.dead()) {
		// Another workspace, protected paths that changed, or an init
		// that died: a new box, set up from this command's plan.
		w.box.stop()
		w.box = nil
	}
	if w.box == nil {
		b, err := w.s.startBox(ctx, spec, key)
		if err != nil {
			return Outcome{}, err
		}
		w.box, w.starts = b, w.starts+1
	}
	out, err := w.box.exec(ctx, w.s.cfg, argv, p)
	if w.box.broken {
		w.box.stop()
		w.box = nil
	}
	if err == nil {
		out.DiskQuota = w.s.checkDisk(ctx, p)
	}
	return out, err
}

// startBox starts bwrap for spec with the init as its command, exactly as
// exec starts a cold command (same plan, filter, lifeline, cgroup
// launcher, parent-death signal), and waits for the init's "ready".
func (s *Sandbox) startBox(ctx context.Context, spec Spec, key string) (*warmBox, error) {
	initSpec := spec
	initSpec.Argv, initSpec.Command = s.cfg.InitCommand, ""
	p, cleanup, err := s.plan(initSpec)
	if err != nil {
		return nil, err
	}
	b := &warmBox{key: key, cleanup: cleanup, exited: make(chan struct{}), msgs: make(chan initMsg, 4), output: make(chan []byte, 1),
		quit: make(chan struct{}), readDone: make(chan struct{})}
	fail := func(err error) (*warmBox, error) {
		b.stop()
		return nil, err
	}
	if err := closeInheritedFDs(); err != nil {
		return fail(err)
	}
	sec, err := filterFile(p.network, false) // warm runs are network none
	if err != nil {
		return fail(err)
	}
	defer func() { _ = sec.Close() }()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return fail(fmt.Errorf("sandbox: status pipe: %w", err))
	}
	defer func() { _ = statusR.Close() }()
	defer func() { _ = statusW.Close() }()
	outR, outW, err := os.Pipe()
	if err != nil {
		return fail(fmt.Errorf("sandbox: output pipe: %w", err))
	}
	defer func() { _ = outW.Close() }()
	go func() {
		b.output <- capture(outR, 64<<10, make(chan struct{}, 1))
		_ = outR.Close()
	}()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fail(fmt.Errorf("sandbox: control channel: %w", err))
	}
	b.ctl, b.ctlFD = os.NewFile(uintptr(fds[0]), "aos-warm-ctl"), fds[0]
	ctlInit := os.NewFile(uintptr(fds[1]), "aos-warm-ctl-init")
	defer func() { _ = ctlInit.Close() }()
	ll, err := newLifeline()
	if err != nil {
		return fail(err)
	}
	defer ll.close()

	b.job, _ = newCgroupJob(s.cfg.CgroupRoot, s.cfg.Limits)
	name, args := s.cfg.BwrapPath, p.args(3, 4)
	if b.job != nil {
		// The whole box, and so every command, runs inside the cgroup.
		args = append(append(append([]string{"-c", launcherScript, "sh"}, b.job.procsFiles()...), "--", name), args...)
		name = "/bin/sh"
	}
	cmd := exec.Command(name, args...)
	cmd.Env = []string{}
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.ExtraFiles = ll.childFiles([]*os.File{sec, statusW, ctlInit}) // fds 3, 4, 5 (initCtlFD)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		// As in exec: the parent-death signal follows this OS thread, so
		// it stays locked until bwrap is reaped, for the box's lifetime.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(b.exited)
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(b.exited)
	}()
	if err := <-started; err != nil {
		return fail(&UnavailableError{Reason: fmt.Sprintf("start bwrap: %v", err), Fix: "check that bubblewrap is installed and executable"})
	}
	b.bwrap = cmd.Process.Pid
	_ = outW.Close()
	_ = statusW.Close()
	_ = ctlInit.Close()
	ll.started()
	go b.readMsgs()

	pidCh := make(chan int, 1)
	go func() { readStatus(statusR, pidCh) }()
	readyCh := make(chan bool, 1)
	go ll.awaitReady(readyCh)
	deadline := time.NewTimer(warmStartTimeout)
	defer deadline.Stop()
	setupErr := func(what string) error {
		b.stop()
		return &SetupError{Message: what + ": " + lastLines(<-b.output, 5)}
	}
	for {
		select {
		case b.child = <-pidCh:
			pidCh = nil
		case ready := <-readyCh:
			readyCh = nil
			if !ready {
				return nil, setupErr("the warm sandbox did not start")
			}
			// As for a cold command: the init runs only now that its
			// sandbox dies with bwrap.
			ll.release()
		case m, ok := <-b.msgs:
			if !ok || m.Op != "ready" {
				return nil, setupErr("the warm sandbox's init did not start")
			}
			if b.child == 0 {
				b.child = <-pidCh // bwrap reports the pid before the init can run
			}
			return b, nil
		case <-b.exited:
			return nil, setupErr("bwrap exited")
		case <-deadline.C:
			return nil, setupErr("the warm sandbox did not start in time")
		case <-ctx.Done():
			b.stop()
			return nil, ctx.Err()
		}
	}
}

// readMsgs forwards the init's messages until the channel ends.
func (b *warmBox) readMsgs() {
	defer close(b.readDone)
	defer close(b.msgs)
	buf := make([]byte, 4096)
	for {
		n, _, _, _, err := unix.Recvmsg(b.ctlFD, buf, nil, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return
		}
		var m initMsg
		if json.Unmarshal(buf[:n], &m) != nil {
			return // not our init's: treat as gone
		}
		select {
		case b.msgs <- m:
		case <-b.quit:
			return
		}
	}
}

func (b *warmBox) send(m initMsg, fd *os.File) error {
	body, err := json.Marshal(m)
	if err != nil {
		return err
	}
	var oob []byte
	if fd != nil {
		oob = unix.UnixRights(int(fd.Fd()))
	}
	return unix.Sendmsg(b.ctlFD, body, oob, nil, unix.MSG_NOSIGNAL)
}

func (b *warmBox) dead() bool {
	select {
	case <-b.exited:
		return true
	default:
		return false
	}
}

// exec runs one command in the box and supervises it as exec does a cold
// one: output cap, timeout (TERM to the command's group, then the whole
// box is killed after the grace) and cancellation. Whatever ends the
// command abnormally tears the box down, so the kill is bwrap's, as on
// the cold path; the next command gets a new box.
func (b *warmBox) exec(ctx context.Context, cfg Config, argv []string, p plan) (Outcome, error) {
	start := time.Now()
	if ctx.Err() != nil {
		return Outcome{ExitCode: -1, Cancelled: true}, nil
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return Outcome{}, fmt.Errorf("sandbox: output pipe: %w", err)
	}
	defer func() { _ = outR.Close() }()
	env := make([]string, 0, len(p.env)/2+1)
	for i := 0; i+1 < len(p.env); i += 2 {
		env = append(env, p.env[i]+"="+p.env[i+1])
	}
	env = append(env, "PWD="+p.workspace) // as bwrap sets it for --chdir
	err = b.send(initMsg{Op: "run", Argv: argv, Env: env, Dir: p.workspace}, outW)
	_ = outW.Close()
	if err != nil {
		b.broken = true
		return Outcome{}, &SetupError{Message: fmt.Sprintf("warm sandbox: send command: %v", err)}
	}
	exceeded := make(chan struct{}, 1)
	outCh := make(chan []byte, 1)
	go func() { outCh <- capture(outR, cfg.OutputCap, exceeded) }()

	var out Outcome
	timeout := time.NewTimer(p.timeout)
	defer timeout.Stop()
	var grace <-chan time.Time
	killAll := func() {
		b.broken = true
		b.kill()
	}
	terminate := func() {
		if grace != nil || b.broken {
			return
		}
		_ = b.send(initMsg{Op: "signal", Sig: int(unix.SIGTERM)}, nil)
		grace = time.After(cfg.KillGrace)
	}
	done := ctx.Done()
	code, exited := 0, false
loop:
	for {
		select {
		case m, ok := <-b.msgs:
			if !ok {
				break loop // the init is gone: so is everything it ran
			}
			if m.Op == "exit" {
				code, exited = m.Code, true
				break loop
			}
		case <-b.exited:
			break loop
		case <-timeout.C:
			out.TimedOut = true
			terminate()
		case <-done:
			done = nil
			out.Cancelled = true
			terminate()
		case <-grace:
			grace = nil
			killAll()
		case <-exceeded:
			out.OutputExceeded = true
			killAll()
		}
	}
	if !exited {
		killAll()
	}
	// The init reports an exit only once every process of the command is
	// dead, so the output pipe is at EOF. An init that lied (a command
	// can ptrace it) is caught here: the output stays open or a process
	// is left, and the box is torn down, which kills them.
	var captured []byte
	select {
	case captured = <-outCh:
	case <-time.After(cfg.KillGrace):
		killAll()
		captured = <-outCh
	}
	if !b.broken && b.leftovers() {
		killAll()
	}
	out.Output = captured
	select {
	case <-exceeded:
		out.OutputExceeded = true
	default:
	}
	out.Duration = time.Since(start)
	if !exited {
		out.ExitCode, out.Signal = -1, "SIGKILL"
		return out, nil
	}
	out.ExitCode = code
	if code > 128 && code <= 128+64 {
		out.Signal = unix.SignalName(syscall.Signal(code - 128))
	}
	return out, nil
}

// leftovers reports, from the host, whether the sandbox holds anything
// besides its pid 1 and the init: pid 1's only child is the init, and the
// init (every one of its threads) has no child.
func (b *warmBox) leftovers() bool {
	kids := childrenOf(b.child)
	if len(kids) != 1 {
		return true
	}
	return len(childrenOf(kids[0])) != 0
}

// childrenOf lists pid's children from /proc/PID/task/*/children; nil
// when it cannot be read.
func childrenOf(pid int) []int {
	tasks, err := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "task"))
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", t.Name(), "children"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// kill SIGKILLs the sandbox's pid 1 (the kernel then kills every process
// of its PID namespace) and bwrap.
func (b *warmBox) kill() {
	if b.child > 0 {
		_ = unix.Kill(b.child, unix.SIGKILL)
	}
	if b.bwrap > 0 {
		_ = unix.Kill(-b.bwrap, unix.SIGKILL)
	}
}

// stop tears the box down and waits until bwrap is reaped and the
// sandbox's pid 1 is gone (its namespace is empty by then), then removes
// the cgroup and the plan's temporary dirs.
func (b *warmBox) stop() {
	if b.stopped {
		return
	}
	b.stopped, b.broken = true, true
	close(b.quit)
	b.kill()
	if b.bwrap > 0 {
		<-b.exited
	}
	if b.child > 0 {
		deadline := time.Now().Add(5 * time.Second)
		for !gone(b.child) && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond) // the kernel reaps asynchronously; bounded by deadline
		}
	}
	if b.ctl != nil {
		if b.bwrap > 0 {
			<-b.readDone // the init is dead: its end of the channel is closed
		}
		_ = b.ctl.Close()
	}
	b.job.remove()
	if b.cleanup != nil {
		b.cleanup()
	}
}

// gone reports whether pid has exited (no such process, or a zombie:
// a PID namespace's pid 1 becomes one only after every other process of
// the namespace is dead).
func gone(pid int) bool {
	f, ok := procStat(pid)
	return !ok || len(f) == 0 || f[0] == "Z" || f[0] == "X"
}
