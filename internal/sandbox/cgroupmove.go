//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Moving the sandbox into its cgroup by pid, without the launcher.
//
// A write to cgroup.procs waits for an RCU grace period (the cgroup
// threadgroup lock), 8-13 ms on cgroup v1 on the shared 2 cores: the
// launcher paid it, plus a /bin/sh exec, before bwrap could start.
// Instead, aos starts bwrap directly and moves it into the cgroup at once,
// then bwrap's child as soon as bwrap reports its pid (enterEarly), in a
// goroutine, while bwrap sets the sandbox up. When a move lands before
// the fork that follows it, everything of the sandbox from there on starts
// in the cgroup, as with the launcher. When the child's move lands after
// the child forked the sandbox's init and the lifeline wrapper, they are
// outside. Either way, before
// "go", confineWrapper checks that the wrapper, the process that becomes
// the command, is listed in every one of the job's cgroups, moves it there
// if not (it is blocked on the go pipe, so nothing of the command has run
// yet; right after the first move this write no longer waits for a grace
// period), checks again, and refuses to let it run otherwise.
//
// When the wrapper was moved on its own, the sandbox's init (which only
// reaps) stays outside the cgroup, and the sandbox's cgroup namespace is
// rooted at aos's cgroup rather than the job's (bwrap unshared it first),
// so a command sees its cgroup as /aos-sandbox-PID-N instead of /. The
// cgroup file systems stay read-only to it either way.

// move moves pid (its whole thread group) into each of j's cgroups,
// stopping at the first that refuses it.
func (j *cgroupJob) move(pid int) error {
	for _, f := range j.procsFiles() {
		if err := os.WriteFile(f, []byte(strconv.Itoa(pid)), 0); err != nil {
			return err
		}
	}
	return nil
}

// enter is move whose error is left to confineWrapper to find.
func (j *cgroupJob) enter(pid int) { _ = j.move(pid) }

// enterEarly moves bwrap (pid) into j's cgroups, then its child when
// child sends it, unless it is already there or no longer bwrap's child
// (its pid could then be another process's); it closes done at the end.
// The main loop closes child, after sending the child's pid or without.
// bwrap itself cannot be another process: aos has not reaped it yet.
func (j *cgroupJob) enterEarly(pid int, child <-chan int, done chan<- struct{}) {
	defer close(done)
	j.enter(pid)
	if c, ok := <-child; ok && parentPID(c) == pid {
		if in, err := j.holds(c); err != nil || !in {
			j.enter(c)
		}
	}
}

// parentPID is pid's parent from /proc/PID/stat, or -1.
func parentPID(pid int) int {
	f, ok := procStat(pid)
	if !ok || len(f) < 2 {
		return -1
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return -1
	}
	return ppid
}

// procStat returns the fields of /proc/PID/stat after the command name
// (state, ppid, …); ok is false when pid has no such file or it does not
// parse. COMM may hold spaces and parentheses: it ends at the last ')'.
func procStat(pid int) (fields []string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, false
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil, false
	}
	return strings.Fields(string(b[i+1:])), true
}

// holds reports whether pid is listed in every one of j's cgroups.
func (j *cgroupJob) holds(pid int) (bool, error) {
	want := strconv.Itoa(pid)
	for _, d := range j.dirs {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			return false, fmt.Errorf("read %s: %w", d, err)
		}
		found := false
		for _, f := range strings.Fields(string(b)) {
			if f == want {
				found = true
				break
			}
		}
		if !found {
			return false, nil
		}
	}
	return true, nil
}

// confine makes sure pid is in every one of j's cgroups, moving it there
// when the early move did not take it.
func (j *cgroupJob) confine(pid int) error {
	in, err := j.holds(pid)
	if err == nil && !in {
		if werr := j.move(pid); werr != nil {
			return &SetupError{Message: fmt.Sprintf("move the command into its cgroup: %v", werr)}
		}
		in, err = j.holds(pid)
	}
	if err != nil {
		return &SetupError{Message: fmt.Sprintf("check the command's cgroup: %v", err)}
	}
	if !in {
		return &SetupError{Message: "move the command into its cgroup: it is not listed there"}
	}
	return nil
}

// confineWrapper prepares the lifeline wrapper under initPID before "go":
// into the job's cgroups when move is set, then under lims.
func confineWrapper(initPID int, job *cgroupJob, move bool, lims []rlimit) error {
	pid, err := lifelinePID(initPID)
	if err != nil {
		return err
	}
	if move {
		if err := job.confine(pid); err != nil {
			return err
		}
	}
	if len(lims) > 0 {
		return setRlimits(pid, lims)
	}
	return nil
}
