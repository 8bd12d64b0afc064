package api_test

import (
	"encoding/json"
	"testing"

	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestModels: the catalogue merged with the provider's live list (the
// scripted server lists claude-haiku-5-5 only); a provider without a key is
// "unknown", never guessed; the answer is cached.
func TestModels(t *testing.T) {
	t.Parallel()
	srv := scripttest.Start(t, "models: [claude-haiku-5-5]\nscripts:\n  - name: x\n    turns: [{text: hi}]\n")
	b := setup(t, storetest.New(t, "sqlite"), setupOpts{env: map[string]string{"ANTHROPIC_BASE_URL": srv.URL(), "OPENAI_API_KEY": ""}})
	code, body := b.do("GET", "/models", nil, b.read)
	if code != 200 {
		t.Fatalf("GET /models = %d %s", code, body)
	}
	var ms []struct {
		ID        string
		Provider  string
		Available *bool
		Note      string
	}
	if err := json.Unmarshal(body, &ms); err != nil {
		t.Fatal(err)
	}
	byID := map[string]int{}
	for i, m := range ms {
		byID[m.ID] = i
	}
	check := func(id string, want *bool, note string) {
		t.Helper()
		i, ok := byID[id]
		if !ok {
			t.Fatalf("%s missing from %s", id, body)
		}
		m := ms[i]
		if (want == nil) != (m.Available == nil) || (want != nil && *want != *m.Available) || m.Note != note {
			t.Errorf("%s: available %v note %q; want %v %q", id, m.Available, m.Note, want, note)
		}
	}
	yes, no := true, false
	check("claude-haiku-5-5", &yes, "")
	check("claude-opus-5-5", &no, "") // in the catalogue, not live: never substituted
	check("gpt-6-luna", nil, "no API key: set OPENAI_API_KEY")
	n := len(srv.Requests())
	if code, _ := b.do("GET", "/models", nil, b.read); code != 200 || len(srv.Requests()) != n {
		t.Errorf("the second call within 10 min reached the provider again (%d → %d requests)", n, len(srv.Requests()))
	}
}
