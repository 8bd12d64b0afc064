package cli

import (
	"encoding/json"
	"strconv"

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
// calls were still on their way, and be printed between them. The gate
// holds a turn's deltas until the persisted step.started of that turn's
// model call has been seen (every event of the previous turn comes before
// it), passes them while the call runs, and drops them once its
// step.completed (which carries the whole text) has been seen. Deltas it
// never places (a turn it joined late, more than maxHeldDeltas) are
// dropped: the step's result prints the text instead.
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
	// (--json).
	copies map[string]bool
}

// maxCopies bounds the step events a watcher remembers for dropCopy.
const maxCopies = 4096

func newLiveGate() *liveGate {
	return &liveGate{open: map[string]bool{}, ended: map[string]bool{}, bySeq: map[string]string{}, held: map[string][]mission.Event{},
		engStarted: map[string]bool{}, engEnded: map[string]bool{}}
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
			g.copies = map[string]bool{}
		}
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
		if g.dropCopy(e) {
			return nil
		}
		var p struct {
			Kind    string `json:"kind"`
			Seq     int    `json:"seq"`
			Request struct {
				Turn *int `json:"turn"`
			} `json:"request"`
		}
		if json.Unmarshal(e.Payload, &p) != nil || p.Kind != "model_call" {
			return []mission.Event{e}
		}
		seqKey := e.RunID + "/" + strconv.Itoa(p.Seq)
		if e.Kind == "step.started" {
			if p.Request.Turn == nil {
				return []mission.Event{e}
			}
			key := e.RunID + "/" + strconv.Itoa(*p.Request.Turn)
			g.open[key], g.bySeq[seqKey] = true, key
			delete(g.ended, key) // a retry of the turn's call streams again
			out := append([]mission.Event{e}, g.held[key]...)
			g.nHeld -= len(g.held[key])
			delete(g.held, key)
			return out
		}
		if key, ok := g.bySeq[seqKey]; ok {
			delete(g.open, key)
			delete(g.bySeq, seqKey)
			g.ended[key] = true
			g.nHeld -= len(g.held[key])
			delete(g.held, key)
		}
	}
	return []mission.Event{e}
}

// dropCopy reports whether e, a step event, was shown already: the agent
// loop's model call announces itself live only (kernel.StepSpec.
// LiveAnnounce), preceded by copies of its run's step events since the
// last such announce, committed or not, so that the model's text streams
// after the previous turn's tool calls and results; their persisted
// events travel by another path, before or after the copies. Whichever of
// a copy and its persisted event comes first is shown, the other dropped
// (by run, seq and kind); a run's persisted run.claimed of a resume
// forgets them (see admit), so what a new holder persists after running a
// step again is shown.
func (g *liveGate) dropCopy(e mission.Event) bool {
	if g.copies == nil {
		return false
	}
	var p struct {
		Seq *int `json:"seq"`
	}
	if json.Unmarshal(e.Payload, &p) != nil || p.Seq == nil {
		return false
	}
	key := e.RunID + "/" + strconv.Itoa(*p.Seq) + "/" + e.Kind
	live := e.ID < 0
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
