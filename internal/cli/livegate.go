package cli

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/aos-run/aos/internal/mission"
)

// maxHeldDeltas bounds the live model text a watcher holds back.
const maxHeldDeltas = 4096

// maxHeldEngineEvents bounds the live engine events held back until
// their run's engine.started is shown.
const maxHeldEngineEvents = 256

// liveGate puts a mission's live (transient) events in their place among
// its persisted ones, for aos mission watch and aos run alike. Live events
// reach a watcher from the worker by a faster path than the persisted
// ones, so they can arrive early.
//
// Model text: the text of a model call arrives as transient model.delta
// events; the next turn's text could arrive while the previous turn's tool
// calls were still on their way, and be printed between them. The kernel
// announces a model call live only: copies of its run's step events since
// the last announce, then a transient step.started (kernel.StepSpec.
// LiveAnnounce). The gate holds a turn's deltas until that step.started
// has been seen and the run's previous model call has completed, passes
// them while the call runs, and drops them once its step.completed (which
// carries the whole text) has been seen. Deltas it never places (a turn it
// joined late, more than maxHeldDeltas) are dropped: the step's result
// prints the text instead.
//
// External engines: their live events (engine.event, engine.model_call,
// never persisted) show after the run's persisted engine.started (held
// until then, at most maxHeldEngineEvents) and never after its
// engine.finished.
type liveGate struct {
	open  map[string]bool            // run/turn: model call started, not ended
	ended map[string]bool            // run/turn: model call ended
	bySeq map[string]string          // run/seq of a model call → its run/turn
	held  map[string][]mission.Event // run/turn → deltas waiting for the call
	nHeld int

	engStarted map[string]bool // run id → engine.started seen
	engEnded   map[string]bool // run id → engine.finished seen
	engHeld    []mission.Event // live engine events before their run's engine.started

	// copies, when set, are the step events shown whose copy or
	// persisted event may follow (run/seq/kind → the shown one was the
	// live copy); the other is not shown again. Nil: every event is shown
	// (--json). liveRuns are the runs copies came from.
	copies   map[string]bool
	liveRuns map[string]bool
	// next holds, per run, a model call's step.started that came while
	// the run's previous model call had not completed yet, or before the
	// persisted event of a copy that went without its body.
	next map[string]heldCall
	// awaiting holds, per run, the copies without their body
	// ("truncated") whose persisted events have not been seen (seq/kind);
	// seen and seenBefore the persisted step events seen (run/seq/kind;
	// two generations of at most maxCopies, so the newest maxCopies are
	// always known). A run's persisted events do not come in seq order
	// (parallel tool calls commit their intents apart), so each awaited
	// event is matched exactly.
	awaiting         map[string]map[string]bool
	seen, seenBefore map[string]bool
}

// maxCopies bounds the step events a watcher remembers for dropCopy.
const maxCopies = 4096

func newLiveGate() *liveGate {
	return &liveGate{open: map[string]bool{}, ended: map[string]bool{}, bySeq: map[string]string{}, held: map[string][]mission.Event{},
		engStarted: map[string]bool{}, engEnded: map[string]bool{}, liveRuns: map[string]bool{}, next: map[string]heldCall{},
		awaiting: map[string]map[string]bool{}, seen: map[string]bool{}}
}

// admit returns the events to show now, in order, for e: none (a held or
// late delta), e, or e followed by the deltas it releases.
func (g *liveGate) admit(e mission.Event) []mission.Event {
	switch e.Kind {
	case "engine.event", "engine.model_call":
		switch {
		case g.engEnded[e.RunID]:
			return nil
		case g.engStarted[e.RunID]:
			return []mission.Event{e}
		}
		if len(g.engHeld) < maxHeldEngineEvents {
			g.engHeld = append(g.engHeld, e)
		}
		return nil
	case "engine.started":
		g.engStarted[e.RunID] = true
		out, keep := []mission.Event{e}, g.engHeld[:0]
		for _, x := range g.engHeld {
			if x.RunID == e.RunID {
				out = append(out, x)
			} else {
				keep = append(keep, x)
			}
		}
		g.engHeld = keep
		return out
	case "run.claimed":
		// A holder that resumes the run may run again steps whose copies
		// were shown (their records were lost with the last holder): show
		// what it persists. (A first claim has nothing to forget, and its
		// event may reach the watcher after the first live copies.)
		var p struct {
			ReplaySteps int `json:"replaySteps"`
		}
		if g.copies != nil && json.Unmarshal(e.Payload, &p) == nil && p.ReplaySteps > 0 {
			for k := range g.copies {
				if strings.HasPrefix(k, e.RunID+"/") {
					delete(g.copies, k)
				}
			}
		}
		// Its calls start again: none is open, none waits, and the copies
		// the last holder sent may never persist (their records were lost
		// with it).
		for k := range g.open {
			if strings.HasPrefix(k, e.RunID+"/") {
				delete(g.open, k)
			}
		}
		delete(g.next, e.RunID)
		delete(g.awaiting, e.RunID)
	case "engine.finished":
		g.engEnded[e.RunID] = true
		return []mission.Event{e}
	case "model.delta":
		var p struct {
			Turn *int `json:"turn"`
		}
		if json.Unmarshal(e.Payload, &p) != nil || p.Turn == nil {
			return []mission.Event{e}
		}
		key := e.RunID + "/" + strconv.Itoa(*p.Turn)
		switch {
		case g.open[key]:
			return []mission.Event{e}
		case g.ended[key] || g.nHeld >= maxHeldDeltas:
			return nil
		}
		g.held[key] = append(g.held[key], e)
		g.nHeld++
		return nil
	case "step.started", "step.completed", "step.failed":
		var p stepPayload
		if json.Unmarshal(e.Payload, &p) != nil {
			p = stepPayload{}
		} else if g.dropCopy(e, p) {
			return nil
		}
		out := g.step(e, p)
		// What the run's held call waited for may have come: then the call.
		if n, ok := g.next[e.RunID]; ok && !g.awaits(e.RunID) && !g.openCall(e.RunID) {
			delete(g.next, e.RunID)
			out = append(out, g.admit(n.ev)...)
		}
		return out
	}
	return []mission.Event{e}
}

// stepPayload is what the gate reads of a step event's payload.
type stepPayload struct {
	Seq       *int   `json:"seq"`
	Kind      string `json:"kind"`
	Truncated bool   `json:"truncated"`
	Request   struct {
		Turn *int `json:"turn"`
	} `json:"request"`
}

// heldCall is a model call's live step.started held back (liveGate.next),
// with its seq and turn.
type heldCall struct {
	ev        mission.Event
	seq, turn int
}

// step places a step event dropCopy let through: a model call's
// step.started opens its turn (or is held, see admit), its completion ends
// it.
func (g *liveGate) step(e mission.Event, p stepPayload) []mission.Event {
	if p.Kind != "model_call" {
		return []mission.Event{e}
	}
	seq := 0
	if p.Seq != nil {
		seq = *p.Seq
	}
	seqKey := e.RunID + "/" + strconv.Itoa(seq)
	if e.Kind == "step.started" {
		if p.Request.Turn == nil {
			return []mission.Event{e}
		}
		if g.openCall(e.RunID) || g.awaits(e.RunID) {
			// The previous call's completion, or the persisted event
			// of a copy that went without its body, has not arrived
			// (persisted events travel the slower path; the kernel
			// commits such a record before the call starts): this
			// call opens after it.
			g.next[e.RunID] = heldCall{e, seq, *p.Request.Turn}
			return nil
		}
		return g.start(e, seqKey, e.RunID+"/"+strconv.Itoa(*p.Request.Turn))
	}
	if key, ok := g.bySeq[seqKey]; ok {
		delete(g.open, key)
		delete(g.bySeq, seqKey)
		g.end(key)
	} else if n, ok := g.next[e.RunID]; ok && n.seq == seq {
		// The held call itself ended (its result prints its text): it
		// opens no more.
		delete(g.next, e.RunID)
		g.end(e.RunID + "/" + strconv.Itoa(n.turn))
	}
	return []mission.Event{e}
}

// end marks a turn's model call ended and drops the text held for it.
func (g *liveGate) end(key string) {
	g.ended[key] = true
	g.nHeld -= len(g.held[key])
	delete(g.held, key)
}

// start opens a model call's turn: e (its step.started), then the deltas
// held for it.
func (g *liveGate) start(e mission.Event, seqKey, key string) []mission.Event {
	g.open[key], g.bySeq[seqKey] = true, key
	delete(g.ended, key) // a retry of the turn's call streams again
	out := append([]mission.Event{e}, g.held[key]...)
	g.nHeld -= len(g.held[key])
	delete(g.held, key)
	return out
}

// awaits reports whether the persisted event of a copy of run that went
// without its body has not been seen yet.
func (g *liveGate) awaits(run string) bool {
	return len(g.awaiting[run]) > 0
}

// openCall reports whether a model call of run is open (started, not
// completed).
func (g *liveGate) openCall(run string) bool {
	for k := range g.open {
		if strings.HasPrefix(k, run+"/") {
			return true
		}
	}
	return false
}

// dropCopy reports whether e, a step event, is not to be shown: the agent
// loop's model call announces itself live only (kernel.StepSpec.
// LiveAnnounce), preceded by copies of its run's step events since the
// last such announce, committed or not, so that the model's text streams
// after the previous turn's tool calls and results; their persisted
// events travel by another path, before or after the copies. Whichever of
// a copy and its persisted event comes first is shown, the other dropped
// (by run, seq and kind). A copy without its body ("truncated": too large
// to travel live) is not shown: its persisted event is, and a model call
// that starts before it arrives waits for it (see admit). Persisted events
// are remembered only for runs copies came from (a replay of history is
// not), a model call's live step.started never (it has no persisted
// twin); a resume's run.claimed forgets its run's (see admit), so what a
// new holder persists after running a step again is shown.
func (g *liveGate) dropCopy(e mission.Event, p stepPayload) bool {
	if g.copies == nil || p.Seq == nil {
		return false
	}
	live := e.ID < 0
	event := strconv.Itoa(*p.Seq) + "/" + e.Kind
	key := e.RunID + "/" + event
	if !live {
		if len(g.seen) >= maxCopies {
			g.seenBefore, g.seen = g.seen, map[string]bool{}
		}
		g.seen[key] = true
		if w := g.awaiting[e.RunID]; w[event] {
			delete(w, event)
			if len(w) == 0 {
				delete(g.awaiting, e.RunID)
			}
		}
	}
	if live {
		if p.Truncated {
			// Its persisted event shows instead; a model call that
			// starts before it arrives waits for it.
			if !g.seen[key] && !g.seenBefore[key] {
				if g.awaiting[e.RunID] == nil {
					g.awaiting[e.RunID] = map[string]bool{}
				}
				g.awaiting[e.RunID][event] = true
			}
			g.liveRuns[e.RunID] = true
			return true
		}
		g.liveRuns[e.RunID] = true
		if p.Kind == "model_call" && e.Kind == "step.started" {
			return false
		}
	} else if !g.liveRuns[e.RunID] {
		return false
	}
	if first, ok := g.copies[key]; ok && first != live {
		delete(g.copies, key)
		return true
	}
	if len(g.copies) >= maxCopies {
		g.copies = map[string]bool{}
	}
	g.copies[key] = live
	return false
}
