package provider_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/aos-run/aos/internal/provider"
)

func TestSpliceBody(t *testing.T) {
	t.Parallel()
	s := `["` + provider.RawArraySentinel + `"]`
	body := []byte(`{"model":"m","messages":` + s + `,"tools":[{"name":"x"}]}`)
	got, err := provider.SpliceBody(body, []json.RawMessage{[]byte(`{"a":1}`), []byte(`{"b":"<&>"}`)})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"stream":true,"model":"m","messages":[{"a":1},{"b":"<&>"}],"tools":[{"name":"x"}]}`
	if string(got) != want {
		t.Errorf("got %s", got)
	}
	if !json.Valid(got) {
		t.Error("invalid JSON")
	}
	got, _ = provider.SpliceBody([]byte(`{"messages":`+s+`}`), nil)
	if string(got) != `{"stream":true,"messages":[]}` {
		t.Errorf("empty: %s", got)
	}
	for _, bad := range []string{`{"messages":[]}`, `{"a":` + s + `,"b":` + s + `}`, s} {
		if _, err := provider.SpliceBody([]byte(bad), nil); !errors.Is(err, provider.ErrNoSentinel) {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}
