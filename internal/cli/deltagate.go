package cli

import (
	"encoding/json"
	"strconv"

	"github.com/aos-run/aos/internal/mission"
)

// maxHeldDeltas bounds the live model text a watcher holds back.
const maxHeldDeltas = 4096

// deltaGate puts a mission's live model text in its place in the
// timeline. The text of a model call arrives as transient model.delta
// events, which reach the server from the worker by a faster path than
// the persisted events: the next turn's text could arrive while the
// previous turn's tool calls were still on their way, and be printed
// between them. The gate holds a turn's deltas until the persisted
// step.started of that turn's model call has been seen (every event of
// the previous turn comes before it), passes them while the call runs, and
// drops them once its step.completed (which carries the whole text) has
// been seen. Deltas it never places (a turn it joined late, more than
// maxHeldDeltas) are dropped: the step's result prints the text instead.
type deltaGate struct {
	open  map[string]bool            // run/turn: model call started, not ended
	ended map[string]bool            // run/turn: model call ended
	bySeq map[string]string          // run/seq of a model call → its run/turn
	held  map[string][]mission.Event // run/turn → deltas waiting for the call
	nHeld int
}

func newDeltaGate() *deltaGate {
	return &deltaGate{open: map[string]bool{}, ended: map[string]bool{}, bySeq: map[string]string{}, held: map[string][]mission.Event{}}
}

// admit returns the events to show now, in order, for e: none (a held or
// late delta), e, or e followed by the deltas it releases.
func (g *deltaGate) admit(e mission.Event) []mission.Event {
	switch e.Kind {
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
