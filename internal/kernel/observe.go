package kernel

import (
	"time"

	"github.com/aos-run/aos/internal/store"
)

// Observer sees the kernel's events that live only in a worker process, for
// metrics. Its methods must be quick and must not block.
type Observer interface {
	// RunClaimed is called when this worker has claimed and started a
	// run. firstWait is how long the run waited between its creation and
	// its first claim; it is negative for a later claim (after a wait, a
	// sleep, a release or a lost lease), whose wait has no clear start.
	RunClaimed(logic string, firstWait time.Duration)
	// LeaseLost is called when a run's lease was lost (fenced by another
	// worker, or not renewed in time) and the run was left to its holder.
	LeaseLost(logic string)
}

func (k *Kernel) observeClaim(run store.Run, now int64) {
	if k.opts.Observer == nil {
		return
	}
	wait := time.Duration(-1)
	if run.StartedAt == 0 && now >= run.CreatedAt {
		wait = time.Duration(now-run.CreatedAt) * time.Millisecond
	}
	k.opts.Observer.RunClaimed(run.Logic, wait)
}

func (k *Kernel) observeLeaseLost(run store.Run) {
	if k.opts.Observer != nil {
		k.opts.Observer.LeaseLost(run.Logic)
	}
}
