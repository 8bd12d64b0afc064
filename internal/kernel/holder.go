package kernel

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// A lease records its holder: hostname, pid and a process identity (boot
// id, pid namespace and the process's start time in clock ticks, field 22 of
// /proc/<pid>/stat). A worker that finds a live lease held on its own
// machine, in its own pid namespace and boot, checks that process: no such
// pid, another process under that pid (another start time) or a zombie
// proves the holder gone, and the lease is taken over at once instead of
// waited out. Anything less certain (another host, another namespace, no
// /proc) waits for the lease to expire, as before.

// holderLiveness is what this machine can tell about a lease holder.
type holderLiveness int

const (
	holderUnknown holderLiveness = iota // not provably either: wait for expiry
	holderAlive
	holderGone
)

// selfHolder identifies this process, on host, as a lease holder.
func selfHolder(host string) store.LeaseHolder {
	h := store.LeaseHolder{Host: host, PID: os.Getpid()}
	machine := machineID()
	if start, _, err := procStart(os.Getpid()); err == nil && machine != "" {
		h.Proc = machine + "/" + start
	}
	return h
}

// machineID is this boot and pid namespace: pids compare only within it.
func machineID() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "/" + ns
}

// procStart reads a process's start time (field 22 of /proc/<pid>/stat)
// and state (field 3). It returns an error wrapping os.ErrNotExist when
// there is no such process.
func procStart(pid int) (start string, state string, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", "", err
	}
	// comm (field 2) is in parentheses and may hold spaces and ')': the
	// fields after it start after the last ')'.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return "", "", fmt.Errorf("kernel: unreadable /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", "", fmt.Errorf("kernel: short /proc/%d/stat", pid)
	}
	return f[19], f[0], nil // field 22 is the 20th after comm; field 3 the 1st
}

// liveness tells whether h, as recorded with a lease, is a process of this
// machine that is alive or provably gone.
func liveness(h store.LeaseHolder, self store.LeaseHolder) holderLiveness {
	if h.Proc == "" || self.Proc == "" || h.Host != self.Host || h.PID <= 0 {
		return holderUnknown
	}
	machine, start, ok := cutLast(h.Proc)
	selfMachine, _, _ := cutLast(self.Proc)
	if !ok || machine != selfMachine {
		return holderUnknown
	}
	got, state, err := procStart(h.PID)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return holderGone
	case err != nil:
		return holderUnknown
	case got != start || state == "Z" || state == "X":
		return holderGone // the pid was reused, or the process exited
	}
	return holderAlive
}

func cutLast(s string) (string, string, bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// takeOverDead leases to this worker a run whose live lease is held by a
// process of this machine that is provably gone (kill -9, a crash), fenced
// by compare-and-set on the old owner and token. It returns
// store.ErrNotFound when there is none.
func (w *worker) takeOverDead(ctx context.Context) (store.Run, error) {
	k := w.k
	now := k.now()
	runs, err := k.st.ListLeasedRuns(ctx, store.ListLeasedRunsParams{Host: w.holder.Host, Now: now, Logics: w.logics, MissionID: w.cfg.MissionID})
	if err != nil {
		return store.Run{}, err
	}
	for _, r := range runs {
		if r.LeaseOwner == w.cfg.ID || liveness(r.Holder, w.holder) != holderGone {
			continue
		}
		got, err := k.st.TakeOverRun(ctx, store.TakeOverRunParams{Old: store.Fence{RunID: r.ID, Owner: r.LeaseOwner, Token: r.FencingToken},
			WorkerID: w.cfg.ID, Holder: w.holder, Now: now, LeaseUntil: now + k.opts.Lease.Milliseconds()})
		if errors.Is(err, store.ErrConflict) {
			continue // another worker took it first
		}
		if err != nil {
			return store.Run{}, err
		}
		k.opts.Logger.Info("took over the lease of a dead process", "run", r.ID, "pid", r.Holder.PID, "host", r.Holder.Host,
			"leaseLeft", time.Duration(r.LeaseExpiresAt-now)*time.Millisecond)
		return got, nil
	}
	return store.Run{}, store.ErrNotFound
}

// LeaseInfo describes who holds a run's live lease.
type LeaseInfo struct {
	RunID string
	// Owner is the holding worker's id.
	Owner string
	Host  string
	PID   int
	// Gone is true when the holder is a process of this machine that is
	// provably gone: a worker here takes the lease over at once.
	Gone bool
	// Alive is true when the holder is a live process of this machine.
	Alive bool
	// ExpiresIn is how long the lease lasts unless its holder renews it.
	ExpiresIn time.Duration
}

// LeaseHolders lists the live leases on a mission's runs and what this
// machine can tell about their holders.
func (k *Kernel) LeaseHolders(ctx context.Context, missionID string) ([]LeaseInfo, error) {
	runs, err := k.st.ListRunsByMission(ctx, missionID)
	if err != nil {
		return nil, fmt.Errorf("kernel: lease holders: %w", err)
	}
	host, _ := os.Hostname()
	self := selfHolder(host)
	now := k.now()
	var out []LeaseInfo
	for _, r := range runs {
		if r.Status != StatusRunning || r.LeaseExpiresAt < now {
			continue
		}
		l := liveness(r.Holder, self)
		out = append(out, LeaseInfo{RunID: r.ID, Owner: r.LeaseOwner, Host: r.Holder.Host, PID: r.Holder.PID,
			Gone: l == holderGone, Alive: l == holderAlive, ExpiresIn: time.Duration(r.LeaseExpiresAt-now) * time.Millisecond})
	}
	return out, nil
}
