package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store/storetest"
)

// FuzzPostBodies sends each input as the body of every mutating route of
// the route table (so a new POST route is fuzzed without editing this
// test). No input may panic or give a 5xx, and a 400 must carry one of the
// typed codes. The daily cap is reached, so valid missions are refused
// after validation instead of piling up.
func FuzzPostBodies(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"objective":"x","workspace":"p","model":"m"}`,
		`{"objective":"x","workspace":"../../etc","model":"m","budgetUsd":-1}`,
		`{"objective":"x","criteria":[""],"workspace":"/","model":"m","network":"open","maxTurns":1e30}`,
		`{"text":"steer"}`, `{"text":""}`, `{"approved":true,"remember":true,"reason":"ok"}`, `{"answer":"blue"}`,
		`{"tool":"shell","commandPrefix":"go test","decision":"allow"}`, `{"tool":"x","decision":"deny","projectId":"p"}`,
		`{"unknown":1}`, `{"objective":"x"} trailing`, `{"text":"\ud800"}`, `{"objective":` + strings.Repeat("[", 10000),
	} {
		f.Add([]byte(seed))
	}
	b := setup(f, storetest.New(f, "sqlite"))
	b.workspace("p")
	ctx := context.Background()
	if err := b.k.SetDailyCap(ctx, 0.01); err != nil {
		f.Fatal(err)
	}
	if err := b.st.AddSpend(ctx, time.Now().UTC().Format(time.DateOnly), 1); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fuzzOne(t, b, body)
	})
}

var typed400 = map[string]bool{"invalid_json": true, "body_too_large": true, "invalid_input": true,
	// The agent service's (seed 000's) codes for a refused request.
	"INVALID_REQUEST": true, "INVALID_WORKSPACE": true, "MACHINE_MISMATCH": true}

func fuzzOne(t *testing.T, b *bundle, body []byte) {
	for _, rt := range b.api.Routes() {
		if rt.Method != "POST" {
			continue
		}
		path := strings.ReplaceAll(rt.Pattern, "{id}", "no-such-id")
		req := httptest.NewRequest("POST", "/api/v1"+path, strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+b.write)
		rec := httptest.NewRecorder()
		b.api.ServeHTTP(rec, req)
		b.record(rec.Body.Bytes())
		var e struct{ Error struct{ Code string } }
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		switch {
		case rec.Code >= 500:
			t.Fatalf("POST %s %q: %d %s", rt.Pattern, body, rec.Code, rec.Body)
		case rec.Code == http.StatusBadRequest && !typed400[e.Error.Code]:
			t.Fatalf("POST %s %q: untyped 400 %s", rt.Pattern, body, rec.Body)
		case rec.Code >= 400 && e.Error.Code == "":
			t.Fatalf("POST %s %q: error without a code: %d %s", rt.Pattern, body, rec.Code, rec.Body)
		}
	}
}
