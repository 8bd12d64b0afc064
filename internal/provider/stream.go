package provider

import (
	"context"
	"fmt"
)

// Attempt is one try of a streamed call. n counts attempts from 0; emit
// forwards a streamed delta to the caller (empty text is dropped).
type Attempt func(ctx context.Context, n int, emit func(Delta)) (*Response, error)

// Stream runs a streamed call's attempts under p: the retry tail every
// adapter shares. Before a retry it tells onDelta to drop what an earlier
// attempt showed (DeltaReset); the response carries the attempt count; an
// error is wrapped as "<provider> call <model>: …" and stays matchable
// (*ProviderError, *MissingKeyError, the context's error).
func (p RetryPolicy) Stream(ctx context.Context, id ID, model string, onDelta func(Delta), attempt Attempt) (*Response, error) {
	shown := false
	emit := func(d Delta) {
		if onDelta == nil || d.Text == "" {
			return
		}
		shown = true
		onDelta(d)
	}
	var resp *Response
	attempts, err := p.Do(ctx, func(ctx context.Context, n int) error {
		if shown {
			onDelta(Delta{Type: DeltaReset})
			shown = false
		}
		r, err := attempt(ctx, n, emit)
		if err != nil {
			return err
		}
		resp = r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s call %s: %w", id, model, err)
	}
	resp.Attempts = attempts
	return resp, nil
}

// StreamError is how an attempt whose stream failed ends, the same for
// every adapter: the caller's own cancellation as ctx's error (never
// retried), the idle watchdog's abandonment (retryable), else mapErr's
// typed error for the SDK's err.
func StreamError(ctx context.Context, wd *Watchdog, id ID, err error, mapErr func(error) error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if werr := wd.Err(id); werr != nil {
		return werr
	}
	return mapErr(err)
}

// Truncated is the retryable error of a stream that ended before its last
// event; what says which event was missing.
func Truncated(id ID, what string) *ProviderError {
	return &ProviderError{Provider: id, Code: "truncated_stream", Retryable: true, Message: "the stream ended " + what}
}
