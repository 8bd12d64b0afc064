package script

import (
	"encoding/json"
	"testing"

	"go.yaml.in/yaml/v3"
)

// A null inside a scripted tool input stays null: strict tool schemas send
// optional fields as null, and turning them into {} broke tool decoding.
func TestToolInputNullsStayNull(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{`{path: a, startLine: null}`, `{"path":"a","startLine":null}`},
		{`{updates: [{id: c1, evidence: null}]}`, `{"updates":[{"evidence":null,"id":"c1"}]}`},
		{`null`, `{}`}, // a missing input is an empty object
	} {
		var v any
		if err := yaml.Unmarshal([]byte(tc.yaml), &v); err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(jsonable(v))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s → %s (%v), want %s", tc.yaml, got, err, tc.want)
		}
	}
}
