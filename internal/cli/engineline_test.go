package cli

import (
	"encoding/json"
	"testing"
)

// An external engine's live events (engine.event from each adapter, and
// the proxy's engine.model_call) print as one line each, escaped.
func TestEngineLine(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		kind, payload, want string
	}{
		{"engine.event", `{"engine":"codex","type":"tool_call","tool":"shell","input":"printf hi > a","exitCode":0}`, "  → codex shell printf hi > a (exit 0)"},
		{"engine.event", `{"engine":"claude","type":"tool_call","tool":"Write","input":"{\"file_path\":\"a\"}"}`, `  → claude Write {"file_path":"a"}`},
		{"engine.event", `{"engine":"codex","type":"file_change","changes":["add a.txt","update b.txt"]}`, "  ✎ codex add a.txt, update b.txt"},
		{"engine.event", `{"engine":"openclaw","type":"tool_summary","calls":2,"tools":["write","read"],"turns":3}`, "  ⚙ openclaw made 2 tool calls: write, read"},
		{"engine.event", `{"engine":"openclaw","type":"text","text":"Done.\u001b[2J"}`, `  openclaw: Done.\x1b[2J`},
		{"engine.event", `{"engine":"codex","type":"other"}`, ""},
		{"engine.model_call", `{"engine":"claude","calls":3,"usd":0.0125}`, "  $ claude model call 3 ($0.0125 so far)"},
	} {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.payload), &m); err != nil {
			t.Fatal(err)
		}
		if got := engineLine(c.kind, m); got != c.want {
			t.Errorf("%s %s:\n got %q\nwant %q", c.kind, c.payload, got, c.want)
		}
	}
}
