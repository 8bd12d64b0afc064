package cli

import (
	"strings"
	"sync"

	"github.com/aos-run/aos/internal/mission"
)

// maxHeldEngineEvents bounds the live engine events held back until
// their run's engine.started is shown.
const maxHeldEngineEvents = 256

// engineGate puts an external engine's live events (transient
// engine.event and engine.model_call, never persisted) in their place in
// aos run's own timeline, as aos mission watch shows them: after the
// run's persisted engine.started, and not after its engine.finished.
// The timeline's events and the live ones come from two goroutines; mu
// serializes their printing.
type engineGate struct {
	mu      sync.Mutex
	started map[string]bool // run id → engine.started shown
	ended   map[string]bool // run id → engine.finished shown
	held    []mission.Event
}

func newEngineGate() *engineGate {
	return &engineGate{started: map[string]bool{}, ended: map[string]bool{}}
}

// persisted is called (under mu) for each persisted event before it is
// shown; it returns the held live events it releases, to show after it.
func (g *engineGate) persisted(kind, runID string) []mission.Event {
	switch kind {
	case "engine.started":
		g.started[runID] = true
		var out, keep []mission.Event
		for _, e := range g.held {
			if e.RunID == runID {
				out = append(out, e)
			} else {
				keep = append(keep, e)
			}
		}
		g.held = keep
		return out
	case "engine.finished":
		g.ended[runID] = true
	}
	return nil
}

// live is called (under mu) for each live event: it reports whether to
// show it now; an early one is held.
func (g *engineGate) live(e mission.Event) bool {
	switch {
	case g.ended[e.RunID]:
		return false
	case g.started[e.RunID]:
		return true
	}
	if len(g.held) < maxHeldEngineEvents {
		g.held = append(g.held, e)
	}
	return false
}

// followLive shows the mission's live engine events until ch closes
// (its subscription's context ended).
func (t *timeline) followLive(ch <-chan mission.Event) {
	for e := range ch {
		if !strings.HasPrefix(e.Kind, "engine.") {
			continue // model.delta: aos run shows each turn's text when it is journaled
		}
		t.gate.mu.Lock()
		if t.gate.live(e) {
			t.pr.render(t.missionID, e.Kind, e.Payload)
		}
		t.gate.mu.Unlock()
	}
}
