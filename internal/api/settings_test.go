package api_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/store/storetest"
)

func TestSettings(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		code, body := b.do("GET", "/settings", nil, b.read)
		if code != 200 || strings.TrimSpace(string(body)) != `{"dailyBudgetUsd":null,"defaultModel":null,"defaultEffort":null,"defaultBudgetUsd":null,"defaultMaxTurns":null,"localBaseUrl":null,"retentionEventsDays":null,"retentionAuditDays":null}` {
			t.Fatalf("empty settings = %d %s", code, body)
		}
		code, body = b.do("PUT", "/settings", `{"dailyBudgetUsd": 2.5, "defaultModel": "claude-sonnet-5-5"}`, b.write)
		if code != 200 {
			t.Fatalf("put = %d %s", code, body)
		}
		// Bad input is refused whole: the valid field beside it is not written.
		for _, bad := range []string{`{"dailyBudgetUsd": -1}`, `{"defaultEffort": "extreme", "defaultMaxTurns": 5}`, `{"defaultModel": ""}`, `{"dailyBudget": 1}`, `{"retentionEventsDays": -1}`, `{"retentionAuditDays": 36501}`} {
			if code, body := b.do("PUT", "/settings", bad, b.write); code != 400 {
				t.Errorf("PUT %s = %d %s, want 400", bad, code, body)
			}
		}
		if code, _ := b.do("PUT", "/settings", `{"defaultMaxTurns": 5}`, b.read); code != 403 {
			t.Errorf("a read token changed settings: %d", code)
		}
		_, body = b.do("GET", "/settings", nil, b.read)
		var got struct {
			DailyBudgetUSD  *float64 `json:"dailyBudgetUsd"`
			DefaultModel    *string  `json:"defaultModel"`
			DefaultMaxTurns *int     `json:"defaultMaxTurns"`
		}
		if err := json.Unmarshal(body, &got); err != nil || got.DailyBudgetUSD == nil || *got.DailyBudgetUSD != 2.5 || got.DefaultModel == nil ||
			*got.DefaultModel != "claude-sonnet-5-5" || got.DefaultMaxTurns != nil {
			t.Fatalf("settings = %s", body)
		}
		// The daily cap is the kernel's: it now refuses model calls at $2.50.
		if capUSD, err := b.k.DailyCap(t.Context()); err != nil || capUSD != 2.5 {
			t.Errorf("kernel daily cap = %v %v", capUSD, err)
		}
	})
}
