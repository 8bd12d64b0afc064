//go:build linux

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroupJob is one command's cgroup: a directory per controller (cgroup
// v1: pids and memory) or one directory (cgroup v2). The sandbox is
// placed in it before the command runs (cgroupmove.go, or bwrap starts in
// it through launcherScript), so everything the command forks is counted.
type cgroupJob struct {
	dirs []string
}

var cgroupSeq atomic.Uint64

// newCgroupJob makes a cgroup for one command under the current process's
// own cgroups, with pids and memory limits. It returns nil and a reason
// when cgroups are not usable here (not mounted, not writable, controllers
// not delegated): then only rlimits bound the command.
func newCgroupJob(root string, l Limits) (*cgroupJob, string) {
	if root == "none" {
		return nil, "cgroups disabled by configuration"
	}
	if l.MaxProcs < 0 && l.MaxMemory < 0 {
		return nil, "no cgroup limit configured"
	}
	own, err := ownCgroups()
	if err != nil {
		return nil, err.Error()
	}
	name := fmt.Sprintf("aos-sandbox-%d-%d", os.Getpid(), cgroupSeq.Add(1))
	j := &cgroupJob{}
	fail := func(err error) (*cgroupJob, string) {
		j.remove()
		return nil, err.Error()
	}
	if path, ok := own["pids"]; ok && fileExists(filepath.Join(root, "pids", "cgroup.procs")) {
		// cgroup v1: one hierarchy per controller.
		mem, ok := own["memory"]
		if !ok {
			return nil, "cgroup v1 without a memory hierarchy"
		}
		for _, c := range []struct{ ctl, path string }{{"pids", path}, {"memory", mem}} {
			d := filepath.Join(root, c.ctl, c.path, name)
			if err := os.Mkdir(d, 0o700); err != nil {
				return fail(fmt.Errorf("make cgroup: %w", err))
			}
			j.dirs = append(j.dirs, d)
		}
		if err := writeLimit(j.dirs[0], "pids.max", l.MaxProcs); err != nil {
			return fail(err)
		}
		if err := writeLimit(j.dirs[1], "memory.limit_in_bytes", l.MaxMemory); err != nil {
			return fail(err)
		}
		if fileExists(filepath.Join(j.dirs[1], "memory.memsw.limit_in_bytes")) {
			// No escape into swap either.
			if err := writeLimit(j.dirs[1], "memory.memsw.limit_in_bytes", l.MaxMemory); err != nil {
				return fail(err)
			}
		}
		return j, ""
	}
	if path, ok := own[""]; ok {
		// cgroup v2: the controllers must be enabled for our children.
		base := filepath.Join(root, path)
		ctl, _ := os.ReadFile(filepath.Join(base, "cgroup.subtree_control"))
		if !strings.Contains(string(ctl), "pids") || !strings.Contains(string(ctl), "memory") {
			return nil, "cgroup v2 without the pids and memory controllers delegated to " + base
		}
		d := filepath.Join(base, name)
		if err := os.Mkdir(d, 0o700); err != nil {
			return fail(fmt.Errorf("make cgroup: %w", err))
		}
		j.dirs = []string{d}
		for _, w := range []struct {
			file string
			v    int64
		}{{"pids.max", l.MaxProcs}, {"memory.max", l.MaxMemory}, {"memory.swap.max", 0}} {
			if w.file == "memory.swap.max" && !fileExists(filepath.Join(d, w.file)) {
				continue
			}
			if err := writeLimit(d, w.file, w.v); err != nil {
				return fail(err)
			}
		}
		return j, ""
	}
	return nil, "no usable cgroup hierarchy under " + root
}

// ownCgroups maps each controller of /proc/self/cgroup to this process's
// path in it ("" is the cgroup v2 entry).
func ownCgroups() (map[string]string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read own cgroups: %w", err)
	}
	defer func() { _ = f.Close() }()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			out[ctl] = parts[2]
		}
	}
	return out, sc.Err()
}

func writeLimit(dir, file string, v int64) error {
	s := "max"
	if v >= 0 {
		s = strconv.FormatInt(v, 10)
	} else if strings.HasPrefix(file, "memory.") && strings.HasSuffix(file, "_in_bytes") {
		s = "-1"
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(s), 0); err != nil {
		return fmt.Errorf("set cgroup %s: %w", file, err)
	}
	return nil
}

// procsFiles are the cgroup.procs files of the job, one per hierarchy.
func (j *cgroupJob) procsFiles() []string {
	var out []string
	for _, d := range j.dirs {
		out = append(out, filepath.Join(d, "cgroup.procs"))
	}
	return out
}

// remove kills whatever is left in the cgroup and removes it. Processes
// of a dead PID namespace take a moment to be reaped, so it polls.
func (j *cgroupJob) remove() {
	if j == nil {
		return
	}
	deadline := time.Now().Add(2 * time.Second)
	for _, d := range j.dirs {
		for {
			err := os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
				break
			}
			if b, rerr := os.ReadFile(filepath.Join(d, "cgroup.procs")); rerr == nil {
				for _, f := range strings.Fields(string(b)) {
					if pid, perr := strconv.Atoi(f); perr == nil && pid > 0 {
						_ = killPID(pid)
					}
				}
			}
			time.Sleep(time.Millisecond) // reaping is asynchronous; bounded by deadline
		}
	}
}

// launcherScript runs as /bin/sh before bwrap: it moves itself into each
// cgroup.procs file given before "--" and then execs the rest, so bwrap and
// everything under it start inside the cgroup. A failed move exits 125
// without running anything.
const launcherScript = `for p do shift; [ "$p" = -- ] && break; echo $$ > "$p" || exit 125; done; exec "$@"`

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func killPID(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// limitsMechanism says how commands' processes and memory are bounded on
// this machine, for the probe's report.
func limitsMechanism(root string, l Limits) string {
	j, why := newCgroupJob(root, l)
	if j == nil {
		if os.Geteuid() == 0 {
			return "rlimits only (" + why + "); as root RLIMIT_NPROC does not bound processes and memory is bounded per process"
		}
		return "rlimits only (" + why + "); memory is bounded per process"
	}
	j.remove()
	return "a cgroup per command (" + strings.Join(j.dirs, ", ") + ") for processes and memory, plus rlimits"
}

// sweepCgroups kills what is left in the per-command cgroups of aos
// processes that died (kill -9) while a command ran, and removes them.
// Their commands normally died with them (Pdeathsig, --die-with-parent),
// but a kill that lands while bwrap is starting can leave its sandboxed
// child running (bwrap sets the child's parent-death signal after it forks
// it). Such a survivor no longer runs its command (the lifeline exits
// once the go pipe reports EOF, see lifeline.go), but may still be
// waiting; this sweep is the second line. Only dirs named for a pid that
// no longer runs are touched.
func sweepCgroups(root string) {
	if root == "none" {
		return
	}
	own, err := ownCgroups()
	if err != nil {
		return
	}
	var parents []string
	for ctl, path := range own {
		if ctl == "" {
			parents = append(parents, filepath.Join(root, path))
		} else if ctl == "pids" || ctl == "memory" {
			parents = append(parents, filepath.Join(root, ctl, path))
		}
	}
	for _, parent := range parents {
		ents, err := os.ReadDir(parent)
		if err != nil {
			continue
		}
		for _, e := range ents {
			var pid, seq int
			if _, err := fmt.Sscanf(e.Name(), "aos-sandbox-%d-%d", &pid, &seq); err != nil || !e.IsDir() || pid == os.Getpid() {
				continue
			}
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
				(&cgroupJob{dirs: []string{filepath.Join(parent, e.Name())}}).remove()
			}
		}
	}
}
