package control

import (
	"sync"

	"github.com/aos-run/aos/internal/mission"
)

// sequenced is a published event with its event_sequence.
type sequenced struct {
	seq uint64
	ev  mission.Event
}

// subscriber receives live events; ch is closed when it falls behind or
// the stream fails, and the client reconnects with its cursor.
type subscriber struct {
	ch chan sequenced
}

// hub numbers the journal's events for one daemon identity, keeps the
// newest retain of them for replay, and fans them out.
type hub struct {
	id     string
	retain int

	mu      sync.Mutex // guards everything below
	seq     uint64     // the last event_sequence assigned
	journal int64      // the last journal event id seen
	ring    []sequenced
	subs    map[*subscriber]struct{}
	failed  bool
}

func newHub(id string, retain int) *hub {
	return &hub{id: id, retain: retain, subs: map[*subscriber]struct{}{}}
}

func (h *hub) start(journal int64) {
	h.mu.Lock()
	h.journal = journal
	h.mu.Unlock()
}

func (h *hub) publish(e mission.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.seq++
	h.journal = e.ID
	x := sequenced{seq: h.seq, ev: e}
	h.ring = append(h.ring, x)
	if len(h.ring) > h.retain {
		h.ring = append(h.ring[:0:0], h.ring[len(h.ring)-h.retain:]...)
	}
	for sub := range h.subs {
		select {
		case sub.ch <- x:
		default: // behind: cut it; its cursor replays from the ring
			close(sub.ch)
			delete(h.subs, sub)
		}
	}
}

// fail cuts every subscriber and refuses new ones: the stream has a gap.
func (h *hub) fail() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failed = true
	for sub := range h.subs {
		close(sub.ch)
		delete(h.subs, sub)
	}
}

func (h *hub) marker() Marker {
	h.mu.Lock()
	defer h.mu.Unlock()
	return Marker{DaemonID: h.id, EventSequence: h.seq, JournalEventID: h.journal}
}

// floor is the oldest retained sequence (seq+1 when none is).
func (h *hub) floor() uint64 {
	if len(h.ring) == 0 {
		return h.seq + 1
	}
	return h.ring[0].seq
}

// subscribe registers a subscriber and returns the retained events after
// cursor (none without one) with the current marker, atomically: nothing
// published in between is lost. A cursor of another identity, before the
// retention floor or past the last sequence is replay_unavailable with
// the snapshot to recover from.
func (h *hub) subscribe(cursor *Marker) (*subscriber, []sequenced, Marker, *Error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := Marker{DaemonID: h.id, EventSequence: h.seq, JournalEventID: h.journal}
	unavailable := func(msg string) *Error {
		return &Error{Code: CodeReplayUnavailable, Message: msg, Retryable: true,
			Recovery: &Recovery{SnapshotRequired: true, Snapshot: &m, ReplayFloor: h.floor()}}
	}
	if h.failed {
		return nil, nil, m, unavailable("the daemon's event stream failed; take a snapshot")
	}
	var replay []sequenced
	if cursor != nil {
		switch {
		case cursor.DaemonID != h.id:
			return nil, nil, m, unavailable("the cursor belongs to another daemon identity")
		case cursor.EventSequence > h.seq:
			return nil, nil, m, unavailable("the cursor is past the last event; it cannot be replayed contiguously")
		case cursor.EventSequence+1 < h.floor():
			return nil, nil, m, unavailable("the cursor predates the retained events")
		}
		for _, x := range h.ring {
			if x.seq > cursor.EventSequence {
				replay = append(replay, x)
			}
		}
	}
	sub := &subscriber{ch: make(chan sequenced, 1024)}
	h.subs[sub] = struct{}{}
	return sub, replay, m, nil
}

func (h *hub) unsubscribe(sub *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[sub]; ok {
		delete(h.subs, sub)
		close(sub.ch)
	}
}
