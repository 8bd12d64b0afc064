package api_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/wire"
)

// TestRetryMission: an ended mission is retried as a new queued mission
// with its objective, criteria, workspace, model, network and budgets; a
// live one is refused (409) and so is an unknown id (404); the daily cap
// applies as to any new mission; the retry is audited.
func TestRetryMission(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		var m mission.Mission
		b.ok("POST", "/missions", map[string]any{"objective": "fix the test", "criteria": []string{"tests pass", "no new deps"},
			"workspace": b.workspace("p"), "model": "claude-opus-5-5", "network": "open", "budgetUsd": 0.5, "maxTurns": 7, "maxWallSec": 600}, &m)
		b.fails("POST", "/missions/"+m.ID+"/retry", nil, 409, "conflict")
		b.fails("POST", "/missions/no-such-mission/retry", nil, 404, "not_found")
		b.ok("POST", "/missions/"+m.ID+"/cancel", nil, nil)
		waitFor(t, 10*time.Second, "the cancel", func() bool {
			var got mission.Mission
			b.ok("GET", "/missions/"+m.ID, nil, &got)
			return kernel.IsTerminal(got.Status)
		})

		var n mission.Mission
		b.ok("POST", "/missions/"+m.ID+"/retry", nil, &n)
		if n.ID == m.ID || n.Status != kernel.StatusQueued || n.Model != "claude-opus-5-5" || n.Title != m.Title {
			t.Fatalf("retried mission %+v", n)
		}
		var was, now engine.Input
		if err := json.Unmarshal(m.Spec, &was); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(n.Spec, &now); err != nil {
			t.Fatal(err)
		}
		if now.Objective != was.Objective || !slices.Equal(now.Criteria, was.Criteria) || now.Workspace != was.Workspace || now.Network != "open" {
			t.Fatalf("retried spec %+v, want %+v", now, was)
		}
		var runs []mission.Run
		b.ok("GET", "/missions/"+n.ID+"/runs", nil, &runs)
		if len(runs) != 1 || runs[0].Budget != (wire.Budget{USD: 0.5, Turns: 7, WallSec: 600}) || runs[0].SpentUSD != 0 {
			t.Fatalf("retried runs %+v", runs)
		}
		b.auditHas("mission.retry mission.create mission.cancel")
		var old mission.Mission
		b.ok("GET", "/missions/"+m.ID, nil, &old)
		if !kernel.IsTerminal(old.Status) {
			t.Fatalf("the retried mission changed: %s", old.Status)
		}

		// The daily cap refuses a retry like any new mission.
		b.ok("POST", "/missions/"+n.ID+"/cancel", nil, nil)
		waitFor(t, 10*time.Second, "the second cancel", func() bool {
			var got mission.Mission
			b.ok("GET", "/missions/"+n.ID, nil, &got)
			return kernel.IsTerminal(got.Status)
		})
		ctx := context.Background()
		if err := b.k.SetDailyCap(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := b.st.AddSpend(ctx, time.Now().UTC().Format(time.DateOnly), 1); err != nil {
			t.Fatal(err)
		}
		b.fails("POST", "/missions/"+n.ID+"/retry", nil, 429, "daily_cap_reached")
	})
}
