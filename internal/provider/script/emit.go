package script

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// errStopStream ends a stream early on purpose (a scripted mid-stream error).
var errStopStream = errors.New("stream stopped by script")

// emitter writes server-sent events, applying a turn's chunk delay, stall,
// dropped connection or mid-stream error after the first event.
type emitter struct {
	ctx        context.Context
	w          http.ResponseWriter
	rc         *http.ResponseController
	named      bool // "event:" lines (Anthropic, Responses); Chat sends data only
	chunkDelay time.Duration
	stall      bool
	drop       bool
	midError   func(e *emitter) error
	failAfter  int // events before drop or midError; 0 means 1
	n          int
	started    bool
}

func newEmitter(ctx context.Context, w http.ResponseWriter, named bool, t Turn) *emitter {
	return &emitter{ctx: ctx, w: w, rc: http.NewResponseController(w), named: named,
		chunkDelay: time.Duration(t.ChunkDelay), stall: t.Stall}
}

func (e *emitter) start() {
	if e.started {
		return
	}
	e.started = true
	h := e.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	e.w.WriteHeader(http.StatusOK)
}

// send writes one event. name is ignored for data-only streams.
func (e *emitter) send(name string, data any) error {
	if e.n > 0 && e.chunkDelay > 0 {
		if err := sleepCtx(e.ctx, e.chunkDelay); err != nil {
			return err
		}
	}
	b, err := encodeJSON(data)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", name, err)
	}
	return e.raw(name, b)
}

func (e *emitter) raw(name string, b []byte) error {
	e.start()
	if e.named {
		fmt.Fprintf(e.w, "event: %s\ndata: %s\n\n", name, b)
	} else {
		fmt.Fprintf(e.w, "data: %s\n\n", b)
	}
	if err := e.rc.Flush(); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	e.n++
	if e.n == max(e.failAfter, 1) {
		switch {
		case e.drop:
			// Abort the response without ending the chunked body: the client
			// sees the connection drop mid-stream.
			panic(http.ErrAbortHandler)
		case e.midError != nil:
			if err := e.midError(e); err != nil {
				return err
			}
			return errStopStream
		}
	}
	return e.ctx.Err()
}

// beforeFinal is called before the events that end a stream; a stalled
// turn hangs here, after its content, until the client or server gives up.
func (e *emitter) beforeFinal() error {
	if e.stall {
		<-e.ctx.Done()
		return e.ctx.Err()
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// stopReason is the Anthropic stop reason of a reply; other formats map it.
func (r *reply) stopReason() string {
	switch {
	case r.refusal != nil:
		return "refusal"
	case r.maxTokens:
		return "max_tokens"
	case r.pause:
		return "pause_turn"
	case len(r.calls) > 0:
		return "tool_use"
	}
	return "end_turn"
}
