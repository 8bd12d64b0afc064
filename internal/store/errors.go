package store

import "errors"

// ErrNotFound is returned when a row that was asked for by id does not exist.
var ErrNotFound = errors.New("store: not found")

// ErrFenced is returned by FenceRun when the run's lease is no longer held
// under the given fencing token: another worker claimed it, or it was
// released, suspended or finished. The kernel maps it to ErrLeaseLost.
var ErrFenced = errors.New("store: fencing token no longer holds the lease")

// ErrConflict is returned when a conditional update found the row in another
// state than the one required (for example a wait that is no longer pending).
var ErrConflict = errors.New("store: row is not in the required state")

// ErrTooLarge is returned by Publish for a payload longer than the driver's
// MaxPayload.
var ErrTooLarge = errors.New("store: payload too large to publish")

// ErrLimit: the write would pass a bound the caller set (too many live
// rows of a kind); nothing was written.
var ErrLimit = errors.New("store: limit reached")
