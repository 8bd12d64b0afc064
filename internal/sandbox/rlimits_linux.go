//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// rlimitResources maps prlimit's flags (wrapLimits) to the resources.
var rlimitResources = map[string]int{
	"--nproc": unix.RLIMIT_NPROC, "--data": unix.RLIMIT_DATA,
	"--fsize": unix.RLIMIT_FSIZE, "--nofile": unix.RLIMIT_NOFILE,
}

// procChildren reports whether /proc lists a task's children
// (CONFIG_PROC_CHILDREN), which lifelinePID needs to find the wrapper.
var procChildren = sync.OnceValue(func() bool {
	pid := os.Getpid()
	_, err := os.Stat(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	return err == nil
})

// directLimits strips the prlimit prefix from p's argv when aos can set
// the rlimits itself (setRlimits), saving the exec of prlimit inside the
// sandbox, and returns the limits to set; nil when prlimit stays.
func directLimits(p *plan) []rlimit {
	if len(p.rlimits) == 0 || p.prlimitArgc == 0 || !procChildren() {
		return nil
	}
	p.argv = p.argv[p.prlimitArgc:]
	return p.rlimits
}

// lifelinePID finds the lifeline wrapper while it waits for "go": the
// only child of bwrap's child initPID (pid 1 of the sandbox's PID
// namespace) at that point, since the wrapper forks nothing before "go"
// (printf and read are builtins). Anything else is refused.
func lifelinePID(initPID int) (int, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", initPID, initPID))
	if err != nil {
		return 0, &SetupError{Message: fmt.Sprintf("find the command to limit: %v", err)}
	}
	kids := strings.Fields(string(b))
	if len(kids) != 1 {
		return 0, &SetupError{Message: fmt.Sprintf("find the command to limit: %d processes under the sandbox's init, want 1", len(kids))}
	}
	pid, err := strconv.Atoi(kids[0])
	if err != nil || pid <= 0 {
		return 0, &SetupError{Message: fmt.Sprintf("find the command to limit: %q", kids[0])}
	}
	return pid, nil
}

// setRlimits sets lims, soft and hard, on the lifeline wrapper pid while
// it waits for "go", so that the command execs under them as under
// prlimit.
func setRlimits(pid int, lims []rlimit) error {
	for _, l := range lims {
		r := unix.Rlimit{Cur: uint64(l.v), Max: uint64(l.v)}
		if err := unix.Prlimit(pid, rlimitResources[l.flag], &r, nil); err != nil {
			return &SetupError{Message: fmt.Sprintf("set %s on the command: %v", strings.TrimPrefix(l.flag, "--"), err)}
		}
	}
	return nil
}
