package backend

import (
	"reflect"
	"testing"
)

func TestCommandEvent(t *testing.T) {
	t.Parallel()
	zero := 0
	for _, c := range []struct {
		name, line string
		want       map[string]any
	}{
		{"tool call", `{"aos_event":"tool_call","tool":"go","input":"test ./...","exitCode":0}`,
			map[string]any{"engine": "e", "type": "tool_call", "tool": "go", "input": "test ./...", "exitCode": zero}},
		{"file change", `{"aos_event":"file_change","changes":["a.go"]}`, map[string]any{"engine": "e", "type": "file_change", "changes": []string{"a.go"}}},
		{"text, control characters escaped", "{\"aos_event\":\"text\",\"text\":\"hi\\u001b[2J\"}", map[string]any{"engine": "e", "type": "text", "text": "hi?[2J"}},
		{"plain stderr", `warning: something`, nil},
		{"other JSON", `{"level":"info","msg":"x"}`, nil},
		{"unknown field", `{"aos_event":"text","text":"x","extra":1}`, nil},
		{"unknown event", `{"aos_event":"exec","tool":"sh"}`, nil},
		{"tool call without a tool", `{"aos_event":"tool_call"}`, nil},
		{"two values", `{"aos_event":"text","text":"a"}{"aos_event":"text","text":"b"}`, nil},
	} {
		got, ok := commandEvent("e", []byte(c.line))
		if ok != (c.want != nil) || (ok && !reflect.DeepEqual(got, c.want)) {
			t.Errorf("%s: got %#v %v, want %#v", c.name, got, ok, c.want)
		}
	}
}
