package provider

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// DefaultIdleTimeout is how long a stream may stay silent (no event, no
// ping) before the attempt is abandoned and retried.
const DefaultIdleTimeout = 10 * time.Minute

// Watchdog cancels one attempt's context when its stream stays silent for
// longer than the idle timeout. The adapter calls Kick on every event.
type Watchdog struct {
	d     time.Duration
	timer *time.Timer
	fired atomic.Bool
}

// StartWatchdog returns a context derived from ctx that is cancelled when
// Kick is not called for d (DefaultIdleTimeout when d is 0; never when d is
// negative), the watchdog, and a cancel function to call when the attempt
// ends.
func StartWatchdog(ctx context.Context, d time.Duration) (context.Context, *Watchdog, context.CancelFunc) {
	if d == 0 {
		d = DefaultIdleTimeout
	}
	actx, cancel := context.WithCancel(ctx)
	w := &Watchdog{d: d}
	if d > 0 {
		w.timer = time.AfterFunc(d, func() {
			w.fired.Store(true)
			cancel()
		})
	}
	return actx, w, func() {
		if w.timer != nil {
			w.timer.Stop()
		}
		cancel()
	}
}

// Kick records that an event arrived.
func (w *Watchdog) Kick() {
	if w.timer != nil && !w.fired.Load() {
		w.timer.Reset(w.d)
	}
}

// Err returns a retryable *ProviderError if the watchdog ended the
// attempt, else nil.
func (w *Watchdog) Err(id ID) error {
	if !w.fired.Load() {
		return nil
	}
	return &ProviderError{Provider: id, Code: "stream_idle", Retryable: true,
		Message: fmt.Sprintf("no data from the provider for %v", w.d)}
}
