package cli

import (
	"strings"

	"github.com/aos-run/aos/internal/mission"
)

// followLive shows the mission's live engine events until ch closes
// (its subscription's context ended).
func (t *timeline) followLive(ch <-chan mission.Event) {
	for e := range ch {
		if !strings.HasPrefix(e.Kind, "engine.") {
			continue // model.delta: aos run shows each turn's text when it is journaled
		}
		t.mu.Lock()
		for _, x := range t.gate.admit(e) {
			t.pr.render(t.missionID, x.Kind, x.Payload)
		}
		t.mu.Unlock()
	}
}
