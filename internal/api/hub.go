package api

import (
	"context"
	"errors"
	"sync"

	"github.com/aos-run/aos/internal/metrics"
	"github.com/aos-run/aos/internal/mission"
)

// hub runs one ListenEvents for the whole server, however many sockets are
// open, and fans each committed event out to the sockets that want it. It
// starts with the first subscriber and stops with the last, so an idle
// server does not poll.
//
// Ordering: the hub publishes events in id order. A subscriber receives
// every event the hub publishes after it subscribed; everything committed
// before that is in the database, where the subscriber catches up (see
// stream), skipping ids it has already sent.
type hub struct {
	svc     *mission.Service
	buffer  int
	metrics *metrics.Metrics // nil records nothing

	mu     sync.Mutex
	subs   map[*sub]struct{}  // guarded by mu
	cancel context.CancelFunc // stops the running listener; nil when none; guarded by mu
	gen    int                // the running listener's generation; guarded by mu
}

// sub is one socket's subscription.
type sub struct {
	missionID string
	ch        chan mission.Event
	end       chan struct{} // closed when the hub drops the subscriber
	err       error         // why, set before end is closed
}

var errHubStopped = errors.New("event listener stopped")

func newHub(svc *mission.Service, buffer int, m *metrics.Metrics) *hub {
	return &hub{svc: svc, buffer: buffer, metrics: m, subs: map[*sub]struct{}{}}
}

// subscribe registers a subscriber, starting the listener at the latest
// event id when it is not running.
func (h *hub) subscribe(ctx context.Context, missionID string) (*sub, error) {
	s := &sub{missionID: missionID, ch: make(chan mission.Event, h.buffer), end: make(chan struct{})}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cancel == nil {
		// A listener still stopping may call back once more; its
		// generation is stale by then, so it publishes nothing.
		latest, err := h.svc.LatestEventID(ctx)
		if err != nil {
			return nil, err
		}
		lctx, cancel := context.WithCancel(context.Background())
		h.gen++
		h.cancel = cancel
		go h.listen(lctx, cancel, h.gen, latest)
	}
	h.subs[s] = struct{}{}
	return s, nil
}

// unsubscribe removes s, stopping the listener with the last subscriber.
func (h *hub) unsubscribe(s *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, s)
	if len(h.subs) == 0 && h.cancel != nil {
		h.cancel()
		h.cancel = nil
	}
}

func (h *hub) listen(ctx context.Context, cancel context.CancelFunc, gen int, cursor int64) {
	defer cancel()
	err := h.svc.ListenEvents(ctx, cursor, "", func(e mission.Event) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		if gen != h.gen || ctx.Err() != nil {
			return context.Canceled
		}
		for s := range h.subs {
			if s.missionID != "" && s.missionID != e.MissionID {
				continue
			}
			select {
			case s.ch <- e:
			default:
				h.metrics.EventDropped()
				h.drop(s, errSlowConsumer)
			}
		}
		return nil
	})
	_ = err // the subscribers are told; their clients reconnect with a cursor
	h.mu.Lock()
	defer h.mu.Unlock()
	if gen != h.gen || ctx.Err() != nil {
		return // stopped on purpose, or superseded
	}
	h.cancel = nil
	for s := range h.subs {
		h.drop(s, errHubStopped)
	}
}

// drop ends a subscriber; h.mu is held.
func (h *hub) drop(s *sub, err error) {
	delete(h.subs, s)
	s.err = err
	close(s.end)
}
