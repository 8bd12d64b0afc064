package provider

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy says how an adapter retries transient failures. The zero
// value is DefaultRetryPolicy(). Sleep and Jitter are injectable so that tests
// never wait real seconds.
type RetryPolicy struct {
	// MaxAttempts is the total number of HTTP attempts, first included
	// (default 6).
	MaxAttempts int
	// BaseDelay is the first backoff (default 500ms); it doubles per retry
	// up to MaxDelay (default 30s).
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter caps a server's retry-after (default 2m). A longer ask
	// ends the retries and is left to the engine's durable sleeps.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done. Default: a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter scales a computed backoff (not a server's retry-after).
	// Default: a random factor in [0.5, 1.0].
	Jitter func(d time.Duration) time.Duration
}

// DefaultRetryPolicy returns the policy used for fields left zero:
// 6 attempts, backoff from 500ms doubling to 30s, retry-after up to 2m.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		MaxAttempts:   6,
		BaseDelay:     500 * time.Millisecond,
		MaxDelay:      30 * time.Second,
		MaxRetryAfter: 2 * time.Minute,
	}
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.BaseDelay <= 0 {
		p.BaseDelay = d.BaseDelay
	}
	if p.MaxDelay <= 0 {
		p.MaxDelay = d.MaxDelay
	}
	if p.MaxRetryAfter <= 0 {
		p.MaxRetryAfter = d.MaxRetryAfter
	}
	if p.Sleep == nil {
		p.Sleep = SleepContext
	}
	if p.Jitter == nil {
		p.Jitter = func(d time.Duration) time.Duration {
			return time.Duration(float64(d) * (0.5 + rand.Float64()/2))
		}
	}
	return p
}

// SleepContext waits d, or returns ctx.Err() as soon as ctx is done.
func SleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Backoff returns the wait before retry number retry (1 for the first
// retry): the server's retryAfter when it gave one, else exponential
// backoff with jitter.
func (p RetryPolicy) Backoff(retry int, retryAfter time.Duration) time.Duration {
	p = p.withDefaults()
	if retryAfter > 0 {
		return retryAfter
	}
	d := float64(p.BaseDelay) * math.Pow(2, float64(retry-1))
	if d > float64(p.MaxDelay) {
		d = float64(p.MaxDelay)
	}
	return p.Jitter(time.Duration(d))
}

// Do runs attempt until it succeeds, fails with a non-retryable error, or
// MaxAttempts is reached. attempt receives its number (1-based). A failure
// is retried only if it is a *ProviderError with Retryable set and a
// RetryAfter no longer than MaxRetryAfter. The returned count is the number
// of attempts made; a final *ProviderError gets it in Attempts.
func (p RetryPolicy) Do(ctx context.Context, attempt func(ctx context.Context, n int) error) (int, error) {
	p = p.withDefaults()
	for n := 1; ; n++ {
		err := attempt(ctx, n)
		if err == nil {
			return n, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return n, ctxErr
		}
		var pe *ProviderError
		if !errors.As(err, &pe) {
			return n, err
		}
		pe.Attempts = n
		if !pe.Retryable || n >= p.MaxAttempts || pe.RetryAfter > p.MaxRetryAfter {
			return n, err
		}
		if serr := p.Sleep(ctx, p.Backoff(n, pe.RetryAfter)); serr != nil {
			return n, serr
		}
	}
}

// ParseRetryAfter reads retry-after-ms, then retry-after (seconds or an
// HTTP date relative to now) from h. It returns 0 when neither is usable.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// ShouldRetryHeader reads the x-should-retry header some providers send:
// it returns (value, true) when the header is "true" or "false".
func ShouldRetryHeader(h http.Header) (bool, bool) {
	switch h.Get("X-Should-Retry") {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// AttemptHeader is the header through which adapters tell the server which
// retry this is (0 for the first attempt). It is the official SDKs' own
// retry-count header; adapters disable the SDK's retries and set it
// themselves, and the scripted server reads it to fail only the first K
// attempts of a call.
const AttemptHeader = "X-Stainless-Retry-Count"
