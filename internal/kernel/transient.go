package kernel

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// Transient events cross processes through the store (store.Publish on
// store.ChannelEvents: NOTIFY on PostgreSQL, unix datagrams on SQLite).
// EmitTransient appends to a bounded outbox and returns; one flusher at a
// time drains it in emission order, batching what queued up into payloads
// of at most the store's MaxPayload:
//
//	{"o":"<origin>","e":[{"m":missionId,"r":runId,"k":kind,"p":payload},…]}
//
// Every kernel has a random origin id, so a kernel skips its own batches
// (its subscribers got those events from the local hub already).
const (
	// outboxCap is how many events wait for the flusher before EmitTransient
	// drops (and counts) new ones.
	outboxCap = 4096
	// publishTimeout bounds one store.Publish of the flusher.
	publishTimeout = 2 * time.Second
	// maxParts bounds how many events one oversize event is split into;
	// text beyond that is cut (and counted).
	maxParts = 64
	// remoteReadyWait bounds how long SubscribeTransient waits for the
	// first cross-process subscription to listen.
	remoteReadyWait = 5 * time.Second
)

// TransientStats counts what happened to transient events in this process.
type TransientStats struct {
	// Published is how many events the store accepted, in Batches payloads.
	Published, Batches int64
	// Received is how many events of other processes reached this one.
	Received int64
	// DroppedQueueFull is how many were emitted while the outbox was full.
	DroppedQueueFull int64
	// DroppedSlowSubscriber counts deliveries skipped because a subscriber
	// of this process was 256 events behind.
	DroppedSlowSubscriber int64
	// Split is how many events were too large for one payload and were
	// split into several; Truncated how many of those lost text beyond
	// maxParts parts; DroppedOversize how many could not be made to fit
	// (or encoded) at all.
	Split, Truncated, DroppedOversize int64
	// PublishFailed is how many events were in payloads the store refused.
	PublishFailed int64
}

type transientCounters struct {
	published, batches, received, queueFull, slow, split, truncated, oversize, failed atomic.Int64
}

// TransientStats returns this kernel's transient event counters.
func (k *Kernel) TransientStats() TransientStats {
	c := &k.tstats
	return TransientStats{Published: c.published.Load(), Batches: c.batches.Load(), Received: c.received.Load(),
		DroppedQueueFull: c.queueFull.Load(), DroppedSlowSubscriber: c.slow.Load(), Split: c.split.Load(),
		Truncated: c.truncated.Load(), DroppedOversize: c.oversize.Load(), PublishFailed: c.failed.Load()}
}

// outbox holds transient events for the flusher.
type outbox struct {
	mu       sync.Mutex
	queue    []TransientEvent // guarded by mu
	flushing bool             // a flusher goroutine is running; guarded by mu
}

// remote is this kernel's cross-process subscription, shared by all its
// SubscribeTransient callers: it runs while there is at least one.
type remote struct {
	mu     sync.Mutex
	refs   int                // guarded by mu
	cancel context.CancelFunc // guarded by mu
	ready  chan struct{}      // closed when the current subscription first listens or fails; guarded by mu
}

func newOrigin() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// emitRemote queues e for other processes. It never blocks on I/O.
func (k *Kernel) emitRemote(e TransientEvent) {
	o := &k.outbox
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.queue) >= outboxCap {
		k.tstats.queueFull.Add(1)
		return
	}
	o.queue = append(o.queue, e)
	if !o.flushing {
		o.flushing = true
		go k.flush()
	}
}

// flush publishes the outbox until it is empty, then exits.
func (k *Kernel) flush() {
	o := &k.outbox
	for {
		o.mu.Lock()
		batch := o.queue
		o.queue = nil
		if len(batch) == 0 {
			o.flushing = false
			o.mu.Unlock()
			return
		}
		o.mu.Unlock()
		for _, p := range k.encodeBatches(batch) {
			ctx, cancel := context.WithTimeout(context.Background(), publishTimeout)
			err := k.st.Publish(ctx, store.ChannelEvents, p.body)
			cancel()
			if err != nil {
				k.tstats.failed.Add(int64(p.events))
				k.opts.Logger.Debug("publish transient events failed; dropped", "events", p.events, "err", err.Error())
				continue
			}
			k.tstats.published.Add(int64(p.events))
			k.tstats.batches.Add(1)
		}
	}
}

type wireBatch struct {
	Origin string      `json:"o"`
	Events []wireEvent `json:"e"`
}

type wireEvent struct {
	MissionID string          `json:"m"`
	RunID     string          `json:"r"`
	Kind      string          `json:"k"`
	Payload   json.RawMessage `json:"p"`
}

type payload struct {
	body   []byte
	events int
}

// encodeBatches packs events, in order, into as few payloads of at most
// the store's MaxPayload as they fit, splitting events that fit in none.
func (k *Kernel) encodeBatches(evs []TransientEvent) []payload {
	head := `{"o":"` + k.origin + `","e":[`
	const tail = `]}`
	room := k.st.MaxPayload() - len(head) - len(tail)
	var out []payload
	var cur []byte
	n := 0
	emit := func() {
		if n > 0 {
			body := make([]byte, 0, len(head)+len(cur)+len(tail))
			body = append(append(append(body, head...), cur...), tail...)
			out = append(out, payload{body: body, events: n})
		}
		cur, n = cur[:0:0], 0
	}
	for _, e := range evs {
		for _, enc := range k.encodeEvent(e, room) {
			if n > 0 && len(cur)+1+len(enc) > room {
				emit()
			}
			if n > 0 {
				cur = append(cur, ',')
			}
			cur = append(cur, enc...)
			n++
		}
	}
	emit()
	return out
}

// encodeEvent returns e's wire encoding, or the encodings of the parts it
// splits into when it does not fit in room bytes: an event whose payload
// is an object with a string "text" (model.delta) becomes several events
// with consecutive pieces of the text, cut at rune boundaries. Anything
// else that does not fit is dropped and counted.
func (k *Kernel) encodeEvent(e TransientEvent, room int) [][]byte {
	enc, err := encodeWire(e, e.Payload)
	if err == nil && len(enc) <= room {
		return [][]byte{enc}
	}
	m, ok := e.Payload.(map[string]any)
	text, isText := m["text"].(string)
	if err != nil || !ok || !isText {
		k.tstats.oversize.Add(1)
		return nil
	}
	with := func(t string) ([]byte, error) {
		c := make(map[string]any, len(m))
		for key, v := range m {
			c[key] = v
		}
		c["text"] = t
		return encodeWire(e, c)
	}
	base, err := with("")
	if err != nil || room-len(base) < 64 {
		k.tstats.oversize.Add(1)
		return nil
	}
	chunks := splitText(text, room-len(base))
	k.tstats.split.Add(1)
	if len(chunks) > maxParts {
		chunks = chunks[:maxParts]
		k.tstats.truncated.Add(1)
	}
	out := make([][]byte, 0, len(chunks))
	for _, c := range chunks {
		enc, err := with(c)
		if err != nil || len(enc) > room {
			k.tstats.oversize.Add(1) // splitText's estimate is an upper bound; not reached
			continue
		}
		out = append(out, enc)
	}
	return out
}

func encodeWire(e TransientEvent, p any) ([]byte, error) {
	raw, err := marshal(p)
	if err != nil {
		return nil, err
	}
	return marshal(wireEvent{MissionID: e.MissionID, RunID: e.RunID, Kind: e.Kind, Payload: raw})
}

// receiveRemote runs the cross-process subscription until ctx ends,
// re-subscribing with backoff when the store's subscription fails.
func (k *Kernel) receiveRemote(ctx context.Context, ready chan struct{}) {
	var once sync.Once
	markReady := func() { once.Do(func() { close(ready) }) }
	defer markReady()
	backoff := 100 * time.Millisecond
	for {
		sub, err := k.st.Subscribe(ctx, store.ChannelEvents)
		markReady()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			k.opts.Logger.Warn("subscribe to transient events of other processes failed; retrying", "err", err.Error(), "backoff", backoff)
		} else {
			backoff = 100 * time.Millisecond
			for p := range sub {
				if ctx.Err() != nil {
					continue // drain; a newer subscription may be delivering already
				}
				k.deliverRemote(p)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// deliverRemote hands another process's batch to this process's
// subscribers, skipping this kernel's own.
func (k *Kernel) deliverRemote(p []byte) {
	var b wireBatch
	if err := json.Unmarshal(p, &b); err != nil || b.Origin == k.origin {
		return
	}
	for _, e := range b.Events {
		// Count first, so a subscriber that has an event never reads a
		// counter that does not include it yet.
		k.tstats.received.Add(1)
		k.transient.publish(TransientEvent{MissionID: e.MissionID, RunID: e.RunID, Kind: e.Kind, Payload: e.Payload})
	}
}

// acquireRemote counts a subscriber in, starting the cross-process
// subscription for the first, and returns a channel closed once it
// listens.
func (k *Kernel) acquireRemote() <-chan struct{} {
	r := &k.remote
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refs++
	if r.refs == 1 {
		ctx, cancel := context.WithCancel(context.Background())
		r.cancel = cancel
		r.ready = make(chan struct{})
		go k.receiveRemote(ctx, r.ready)
	}
	return r.ready
}

// releaseRemote counts a subscriber out, stopping the cross-process
// subscription after the last.
func (k *Kernel) releaseRemote() {
	r := &k.remote
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refs--
	if r.refs == 0 {
		r.cancel()
		r.cancel = nil
	}
}
