package device

import "time"

// Limits bound one device's use of the channel.
type Limits struct {
	// Rate and Burst are a device's token bucket, shared by all its
	// sockets on this server: every frame takes a token; a frame without
	// one is answered RATE_LIMITED (10 per second, burst 20).
	Rate  float64
	Burst int
	// MaxInFlight is how many operations one socket may have running; one
	// more is answered BACKPRESSURE (8).
	MaxInFlight int
	// MaxSockets is how many sockets one device may have open on this
	// server; one more is closed at once with 1013 (try again later) (4).
	MaxSockets int
	// MaxMessage bounds a frame in bytes; a larger one closes the socket
	// with 1009 (message too big) (64 KiB).
	MaxMessage int64
	// Recheck is how often an open socket checks its device is still
	// paired, for a revocation made through another server (30 s).
	Recheck time.Duration
	// RequestIDs is how many recent requestIds a socket remembers to
	// refuse a reused one (4096).
	RequestIDs int
}

// DefaultLimits are the limits of a zero Limits.
var DefaultLimits = Limits{Rate: 10, Burst: 20, MaxInFlight: 8, MaxSockets: 4, MaxMessage: 64 << 10, Recheck: 30 * time.Second, RequestIDs: 4096}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.Rate <= 0 {
		l.Rate = d.Rate
	}
	if l.Burst <= 0 {
		l.Burst = d.Burst
	}
	if l.MaxInFlight <= 0 {
		l.MaxInFlight = d.MaxInFlight
	}
	if l.MaxSockets <= 0 {
		l.MaxSockets = d.MaxSockets
	}
	if l.MaxMessage <= 0 {
		l.MaxMessage = d.MaxMessage
	}
	if l.Recheck <= 0 {
		l.Recheck = d.Recheck
	}
	if l.RequestIDs <= 0 {
		l.RequestIDs = d.RequestIDs
	}
	return l
}

// bucket is a token bucket; guarded by Service.mu.
type bucket struct {
	tokens float64
	last   time.Time
}

// allow takes one token from the device's bucket, if it has one.
func (s *Service) allow(deviceID string) bool {
	now := s.opts.Now()
	l := s.opts.Limits
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[deviceID]
	if b == nil {
		b = &bucket{tokens: float64(l.Burst), last: now}
		s.buckets[deviceID] = b
	}
	if el := now.Sub(b.last).Seconds(); el > 0 {
		b.tokens = min(float64(l.Burst), b.tokens+el*l.Rate)
		b.last = now
	}
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// recentIDs remembers the last n requestIds of a socket.
type recentIDs struct {
	n    int
	set  map[string]struct{}
	ring []string
	next int
}

// add records id; false if it is remembered already.
func (r *recentIDs) add(id string) bool {
	if r.set == nil {
		r.set = make(map[string]struct{}, r.n)
		r.ring = make([]string, r.n)
	}
	if _, ok := r.set[id]; ok {
		return false
	}
	if old := r.ring[r.next]; old != "" {
		delete(r.set, old)
	}
	r.ring[r.next] = id
	r.next = (r.next + 1) % r.n
	r.set[id] = struct{}{}
	return true
}
