package backend

import (
	"bytes"
	"encoding/json"
)

// A command: engine may show its work live: each line it writes to
// stderr that is a JSON object with an "aos_event" member becomes an
// engine.event on the timeline (docs/ENGINES.md), the same events the
// adapters map from their tools' streams. Other stderr lines are only
// kept for the tail shown to the owner.

// commandEventLine is one such line, decoded strictly.
type commandEventLine struct {
	Event    string   `json:"aos_event"` // tool_call, file_change or text
	Tool     string   `json:"tool,omitempty"`
	Input    string   `json:"input,omitempty"`
	ExitCode *int     `json:"exitCode,omitempty"`
	Changes  []string `json:"changes,omitempty"`
	Text     string   `json:"text,omitempty"`
}

// maxEventLine bounds a stderr line read as an event.
const maxEventLine = 16 << 10

// commandEvent maps one stderr line of engine name to an engine.event
// payload; anything but a well-formed event line is not one.
func commandEvent(name string, line []byte) (map[string]any, bool) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' || len(line) > maxEventLine || !bytes.Contains(line, []byte(`"aos_event"`)) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	var e commandEventLine
	if dec.Decode(&e) != nil || dec.More() {
		return nil, false
	}
	ev := map[string]any{"engine": name, "type": e.Event}
	switch e.Event {
	case "tool_call":
		if e.Tool == "" {
			return nil, false
		}
		ev["tool"], ev["input"] = clip(e.Tool, 80), clip(e.Input, 300)
		if e.ExitCode != nil {
			ev["exitCode"] = *e.ExitCode
		}
	case "file_change":
		if len(e.Changes) == 0 || len(e.Changes) > 50 {
			return nil, false
		}
		changes := make([]string, len(e.Changes))
		for i, c := range e.Changes {
			changes[i] = clip(c, 300)
		}
		ev["changes"] = changes
	case "text":
		if e.Text == "" {
			return nil, false
		}
		ev["text"] = clip(e.Text, 2000)
	default:
		return nil, false
	}
	return ev, true
}
