package kernel

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// TransientEvent is a live-only event (model.delta): never persisted,
// delivered to listeners with id -1. Payload is the value given to
// EmitTransient for events of this process, and its JSON encoding
// (json.RawMessage) for events of other processes.
type TransientEvent struct {
	MissionID string
	RunID     string
	Kind      string
	Payload   any
}

// hub fans transient events out to this process's subscribers; a slow
// subscriber loses events rather than blocking the run.
type hub struct {
	mu      sync.Mutex
	subs    map[chan TransientEvent]struct{} // guarded by mu
	dropped *atomic.Int64                    // deliveries skipped for a full subscriber
}

func newHub(dropped *atomic.Int64) *hub {
	return &hub{subs: map[chan TransientEvent]struct{}{}, dropped: dropped}
}

func (h *hub) publish(e TransientEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- e:
		default:
			h.dropped.Add(1)
		}
	}
}

// emitTransient delivers e to this process's subscribers and queues it
// for other processes'. It never blocks on I/O.
func (k *Kernel) emitTransient(e TransientEvent) {
	k.transient.publish(e)
	if !k.opts.LocalTransientOnly {
		k.emitRemote(e)
	}
}

// SubscribeTransient returns live transient events until ctx ends: this
// process's, and (unless Options.LocalTransientOnly) those of every other
// process on the database, in emission order per run and each once. A
// subscriber that falls 256 events behind misses events. The first
// subscriber waits until the cross-process subscription listens (at most
// a few seconds; if the store refuses, it keeps retrying in the
// background).
func (k *Kernel) SubscribeTransient(ctx context.Context) <-chan TransientEvent {
	ch := make(chan TransientEvent, 256)
	k.transient.mu.Lock()
	k.transient.subs[ch] = struct{}{}
	k.transient.mu.Unlock()
	remote := !k.opts.LocalTransientOnly
	if remote {
		ready := k.acquireRemote()
		t := time.NewTimer(remoteReadyWait)
		select {
		case <-ready:
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
	go func() {
		<-ctx.Done()
		k.transient.mu.Lock()
		delete(k.transient.subs, ch)
		k.transient.mu.Unlock()
		close(ch)
		if remote {
			k.releaseRemote()
		}
	}()
	return ch
}

// ListenEvents calls fn for every persisted event with id > cursor (of one
// mission when missionID is set), in id order, then for new ones as they
// commit, until ctx ends or fn fails. Events of this process wake it at
// once (the local bell); others are found by a poll every
// Options.EventPoll. It returns ctx's error or fn's.
func (k *Kernel) ListenEvents(ctx context.Context, cursor int64, missionID string, fn func(store.Event) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for {
		bell := k.eventBellChan()
		for {
			evs, err := k.st.ListEvents(ctx, store.ListEventsParams{After: cursor, MissionID: missionID, Limit: 500})
			if err != nil && !k.st.IsTransient(err) {
				return fmt.Errorf("listen events: %w", err)
			}
			for _, e := range evs {
				if err := fn(e); err != nil {
					return err
				}
				cursor = e.ID
			}
			if len(evs) < 500 {
				break
			}
		}
		t := time.NewTimer(k.opts.EventPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-bell:
		case <-t.C:
		}
		t.Stop()
	}
}
