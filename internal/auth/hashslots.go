package auth

import (
	"context"
	"runtime"
	"time"
)

// argon2id needs Argon2Params.MemoryKiB (19 MiB by default) and some 30 ms
// of a core per hash; unbounded, a burst of logins (from many addresses,
// each within its throttle allowance) would take as much memory as it has
// requests. hashSlots bounds how many hashes run at once; a request that
// cannot get a slot within Options.HashWait is refused with ErrThrottled,
// never queued without bound.

// defaultHashWait is how long a request waits for a hash slot by default.
const defaultHashWait = 250 * time.Millisecond

// hashRetryAfter is what a request refused for want of a slot is told.
const hashRetryAfter = time.Second

// defaultHashSlots is twice GOMAXPROCS: every core busy hashing, and as
// many hashes ready to follow.
func defaultHashSlots() int { return 2 * runtime.GOMAXPROCS(0) }

// hashing runs f holding one of the hash slots.
func (s *Service) hashing(ctx context.Context, f func()) error {
	select {
	case s.slots <- struct{}{}:
	default:
		t := time.NewTimer(s.opts.HashWait)
		defer t.Stop()
		select {
		case s.slots <- struct{}{}:
		case <-t.C:
			return &Error{Code: CodeThrottled, Msg: "the server is busy checking passwords; try again shortly", RetryAfter: hashRetryAfter}
		case <-ctx.Done():
			return fault("wait for a hash slot", ctx.Err())
		}
	}
	defer func() { <-s.slots }()
	f()
	return nil
}
