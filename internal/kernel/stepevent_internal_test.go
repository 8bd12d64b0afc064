package kernel

import (
	"bytes"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/store"
)

// TestStepEventJSONIsCanonical: a step event built in one pass has exactly
// the bytes the canonical encoding of its payload map gives (what events
// carried before), for every body key, awkward names and bodies, an empty
// body and one over the event's limit.
func TestStepEventJSONIsCanonical(t *testing.T) {
	t.Parallel()
	canon := func(v any) []byte {
		b, err := CanonicalJSON(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bodies := map[string][]byte{
		"object":    canon(map[string]any{"z": 1, "a": []any{"x", 2.5, nil, true}, "m": map[string]any{"b": "<&>", "a": "\u2028 é \"q\" \\ \n"}}),
		"struct":    canon(struct{ B, A string }{"b", "a"}),
		"string":    canon("a < b && c > d"),
		"number":    []byte(`12345678901234567890.5e3`),
		"null":      canon(nil),
		"empty":     nil,
		"too large": canon(map[string]string{"content": strings.Repeat("x", maxEventBodyLen)}),
	}
	steps := []store.Step{
		{Seq: 0, Kind: "tool_call", Name: "write_file", Effect: "idempotent_write"},
		{Seq: 1234567, Kind: "k\"<ind>&", Name: "na\u2028me\x01\xff", Effect: "read"},
		{},
	}
	for _, key := range []string{"request", "result", "error", "other"} {
		for name, body := range bodies {
			for _, s := range steps {
				got, err := stepEventJSON(s, key, body)
				if err != nil {
					t.Fatal(err)
				}
				if want := canon(stepEventPayload(s, key, body)); !bytes.Equal(got, want) {
					t.Errorf("%s, %s body, step %+v:\n got %s\nwant %s", key, name, s, got, want)
				}
			}
		}
	}
}
