package mission

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/kernel"
)

// TestTransientViewDropsNative: a live copy of a model call's
// step.completed (kernel.StepSpec.LiveAnnounce) reaches a subscriber, as
// the persisted event does, without the provider's native response; other
// transient events pass unchanged.
func TestTransientViewDropsNative(t *testing.T) {
	for _, tc := range []struct {
		kind, payload string
		native        bool // native stays
	}{
		{"step.completed", `{"kind":"model_call","name":"model","result":{"blocks":[],"native":{"secret":"x"}},"seq":3}`, false},
		{"step.completed", `{"kind":"tool_call","name":"read_file","result":{"content":"native","ok":true},"seq":4}`, true},
		{"model.delta", `{"text":"\"native\"","turn":1,"type":"text"}`, true},
	} {
		e, err := transientView(kernel.TransientEvent{MissionID: "m", RunID: "r", Kind: tc.kind, Payload: json.RawMessage(tc.payload)}, 1)
		if err != nil {
			t.Fatal(err)
		}
		if e.ID != -1 || e.Kind != tc.kind || e.RunID != "r" {
			t.Errorf("%s: event %+v", tc.kind, e)
		}
		if got := strings.Contains(string(e.Payload), "native"); got != tc.native {
			t.Errorf("%s %s: payload %s (native kept: %v, want %v)", tc.kind, tc.payload, e.Payload, got, tc.native)
		}
	}
}
