//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// status is what bwrap writes to --json-status-fd: one JSON object with
// "child-pid" once the command started, one with "exit-code" at its end.
type status struct {
	childPID int
	exitCode int
	exited   bool
}

// readStatus decodes bwrap's status stream until EOF, sending the child's
// host pid on pid as soon as it is known.
func readStatus(r io.Reader, pid chan<- int) status {
	var st status
	dec := json.NewDecoder(r)
	for {
		var m map[string]json.RawMessage
		if err := dec.Decode(&m); err != nil {
			return st
		}
		if v, ok := m["child-pid"]; ok && json.Unmarshal(v, &st.childPID) == nil {
			pid <- st.childPID
		}
		if v, ok := m["exit-code"]; ok && json.Unmarshal(v, &st.exitCode) == nil {
			st.exited = true
		}
	}
}

// capture reads r into at most limit bytes. When more arrives it reports
// on exceeded once and keeps draining, so writers never block on a full
// pipe before they are killed.
func capture(r io.Reader, limit int, exceeded chan<- struct{}) []byte {
	var buf bytes.Buffer
	chunk := make([]byte, 32<<10)
	over := false
	for {
		n, err := r.Read(chunk)
		if n > 0 && !over {
			room := limit - buf.Len()
			if n > room {
				buf.Write(chunk[:room])
				over = true
				exceeded <- struct{}{}
			} else {
				buf.Write(chunk[:n])
			}
		}
		if err != nil {
			return buf.Bytes()
		}
	}
}

// exec starts bwrap for p and supervises it: output cap, timeout
// (TERM to the command's group, KILL after the grace) and cancellation.
func (s *Sandbox) exec(ctx context.Context, p plan) (Outcome, error) {
	start := time.Now()
	if ctx.Err() != nil {
		return Outcome{ExitCode: -1, Cancelled: true}, nil
	}
	if err := closeInheritedFDs(); err != nil {
		return Outcome{}, err
	}
	sec, err := filterFile(p.network, p.listen)
	if err != nil {
		return Outcome{}, err
	}
	defer func() { _ = sec.Close() }()
	statusR, statusW, err := os.Pipe()
	if err != nil {
		return Outcome{}, fmt.Errorf("sandbox: status pipe: %w", err)
	}
	defer func() { _ = statusR.Close() }()
	outR, outW, err := os.Pipe()
	if err != nil {
		_ = statusW.Close()
		return Outcome{}, fmt.Errorf("sandbox: output pipe: %w", err)
	}
	defer func() { _ = outR.Close() }()
	ll, err := newLifeline()
	if err != nil {
		_ = statusW.Close()
		_ = outW.Close()
		return Outcome{}, err
	}
	defer ll.close()

	// Pdeathsig follows the OS thread that started the child, not the
	// process: this goroutine stays on its thread until the child is
	// reaped, so bwrap (and through --die-with-parent everything under
	// it) is SIGKILLed the moment this process dies, even before bwrap
	// has set anything up.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	// ExtraFiles[i] becomes fd 3+i: the filter, the status pipe, the
	// spec's files from 5 on, then the network-open block pipe.
	extra := append([]*os.File{sec, statusW}, p.extraFiles...)
	var blockR, blockW *os.File
	if p.network == NetworkOpen {
		if s.cfg.SlirpPath == "" {
			_ = statusW.Close()
			_ = outW.Close()
			return Outcome{}, errNoSlirp()
		}
		r, w, err := os.Pipe()
		if err != nil {
			_ = statusW.Close()
			_ = outW.Close()
			return Outcome{}, fmt.Errorf("sandbox: block pipe: %w", err)
		}
		blockR, blockW = r, w
		defer func() { _ = blockW.Close() }()
		defer func() { _ = blockR.Close() }()
		p.blockFD = 3 + len(extra)
		extra = append(extra, blockR)
	}
	lims := directLimits(&p) // aos sets them before "go": no prlimit exec
	job, _ := newCgroupJob(s.cfg.CgroupRoot, s.cfg.Limits)
	defer job.remove()
	name, args := s.cfg.BwrapPath, p.args(3, 4)
	// With /proc's children lists, aos moves the sandbox into the cgroup
	// itself (cgroupmove.go): no launcher exec, and the move's wait
	// overlaps bwrap's setup. Without them, bwrap starts inside the
	// command's cgroup through the launcher (see launcherScript).
	moveByPID := job != nil && procChildren()
	if job != nil && !moveByPID {
		args = append(append(append([]string{"-c", launcherScript, "sh"}, job.procsFiles()...), "--", name), args...)
		name = "/bin/sh"
	}
	cmd := exec.Command(name, args...)
	cmd.Env = []string{} // bwrap itself gets nothing of ours either
	cmd.Stdout, cmd.Stderr = outW, outW
	cmd.ExtraFiles = ll.childFiles(extra)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	err = cmd.Start()
	_ = outW.Close()
	_ = statusW.Close()
	ll.started()
	if err != nil {
		return Outcome{}, &UnavailableError{Reason: fmt.Sprintf("start bwrap: %v", err), Fix: "check that bubblewrap is installed and executable"}
	}
	if blockR != nil {
		_ = blockR.Close() // the block pipe's read end now lives in bwrap only
	}

	pidCh := make(chan int, 1)
	stCh := make(chan status, 1)
	go func() { stCh <- readStatus(statusR, pidCh) }()
	exceeded := make(chan struct{}, 1)
	outCh := make(chan []byte, 1)
	go func() { outCh <- capture(outR, s.cfg.OutputCap, exceeded) }()
	waitCh := make(chan error, 1)
	go func() { waitCh <- cmd.Wait() }()
	readyCh := make(chan bool, 1)
	go ll.awaitReady(readyCh)

	var out Outcome
	childPID := 0
	timeout := time.NewTimer(p.timeout)
	defer timeout.Stop()
	var grace <-chan time.Time
	killAll := func() {
		ll.cut()
		_ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		if childPID > 0 {
			_ = unix.Kill(-childPID, unix.SIGKILL)
		}
	}
	terminating := false
	terminate := func() {
		if terminating {
			return
		}
		terminating = true
		ll.cut() // a command still waiting for "go" exits without running
		if childPID == 0 {
			killAll() // not started yet: nothing to TERM
			return
		}
		_ = unix.Kill(-childPID, unix.SIGTERM)
		grace = time.After(s.cfg.KillGrace)
	}
	done := ctx.Done()
	var waitErr error
	var nat *slirp
	defer func() { nat.stop() }()
	var netErr, limErr error
	ready, went := false, false
	// moved reports the end of the early moves of bwrap and then of its
	// child (sent on moveChild) into the cgroup (nil when there is none
	// to wait for). They wait for an RCU grace period (several ms on
	// cgroup v1), spent while bwrap sets the sandbox up; confineWrapper
	// checks the outcome before "go" (cgroupmove.go).
	var moved chan struct{}
	var moveChild chan int
	if moveByPID && !s.cfg.lateCgroupMove {
		moved, moveChild = make(chan struct{}), make(chan int, 1)
		go job.enterEarly(cmd.Process.Pid, moveChild, moved)
	}
	// goNow lets the command run once the wrapper is ready, its host
	// pid's parent is known and the early cgroup move is over, after aos
	// has confined it to its cgroup and set its rlimits. A cut lifeline
	// (terminating) stays cut.
	goNow := func() {
		if !ready || childPID == 0 || moved != nil || went || terminating || netErr != nil || limErr != nil {
			return
		}
		went = true
		if moveByPID || len(lims) > 0 {
			if limErr = confineWrapper(childPID, job, moveByPID, lims); limErr != nil {
				killAll()
				return
			}
		}
		if s.cfg.beforeGo != nil {
			s.cfg.beforeGo(p.argv)
		}
		if ctx.Err() == nil { // else the next turn cuts it
			ll.release()
		}
	}
loop:
	for {
		select {
		case childPID = <-pidCh:
			if moveChild != nil {
				moveChild <- childPID
				close(moveChild)
				moveChild = nil
			}
			if blockW == nil {
				goNow()
				break
			}
			// The command waits on the block pipe; give its network
			// namespace outbound NAT first, then release it.
			if nat, netErr = s.startSlirp(childPID, p.blockFD); netErr != nil {
				killAll()
				break
			}
			_, _ = blockW.Write([]byte{1})
			_ = blockW.Close()
		case <-moved:
			moved = nil
			goNow()
		case ready = <-readyCh:
			readyCh = nil
			// The wrapper runs inside a sandbox whose processes now die
			// with bwrap; only now may the command run.
			goNow()
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
		case waitErr = <-waitCh:
			break loop
		}
	}
	if moveChild != nil {
		close(moveChild)
	}
	if moved != nil {
		<-moved // the early moves end within a grace period; then the job may go
	}
	// bwrap is gone: with --die-with-parent its pid-1 is gone too, and the
	// kernel kills everything left in the PID namespace, so the pipes close.
	out.Output = <-outCh
	select {
	case <-exceeded:
		out.OutputExceeded = true
	default:
	}
	st := <-stCh
	out.Duration = time.Since(start)
	killed := out.TimedOut || out.Cancelled || out.OutputExceeded
	if st.exited {
		out.ExitCode = st.exitCode
		if st.exitCode > 128 && st.exitCode <= 128+64 {
			out.Signal = unix.SignalName(syscall.Signal(st.exitCode - 128))
		}
		return out, nil
	}
	out.ExitCode = -1
	var ee *exec.ExitError
	if errors.As(waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			out.Signal = unix.SignalName(ws.Signal())
		}
	}
	if netErr != nil {
		var se *SetupError
		if errors.As(netErr, &se) && len(bytes.TrimSpace(out.Output)) > 0 {
			se.Message += "; bwrap: " + lastLines(out.Output, 5) // bwrap may have died first
		}
		return Outcome{}, netErr
	}
	if limErr != nil {
		return Outcome{}, limErr
	}
	if killed {
		return out, nil
	}
	return Outcome{}, &SetupError{Message: lastLines(out.Output, 5)}
}

// closeInheritedFDs marks every descriptor from 3 up close-on-exec in this
// process. Go opens its own files close-on-exec, but descriptors the
// worker inherited from its parent are not, and os/exec would pass them
// to bwrap and on into the sandbox. ExtraFiles are unaffected: the child
// receives duplicates.
func closeInheritedFDs() error {
	err := unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	if err == nil {
		return nil
	}
	// Kernels before 5.11: walk /proc/self/fd.
	ents, rerr := os.ReadDir("/proc/self/fd")
	if rerr != nil {
		return &UnavailableError{Reason: fmt.Sprintf("cannot mark inherited descriptors close-on-exec: %v; %v", err, rerr), Fix: "mount /proc"}
	}
	for _, e := range ents {
		var fd int
		if _, serr := fmt.Sscanf(e.Name(), "%d", &fd); serr == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
	return nil
}
