package api_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestMissionLifecycle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		m := b.createMission()
		if m.Status != "queued" || m.Model != "claude-opus-5-5" || m.Title != "fix the test" {
			t.Fatalf("created %+v", m)
		}
		var got mission.Mission
		b.ok("GET", "/missions/"+m.ID, nil, &got)
		if got.ID != m.ID || got.RootRunID == "" {
			t.Fatalf("get: %+v", got)
		}
		var list []mission.Mission
		b.ok("GET", "/missions?status=queued", nil, &list)
		if len(list) != 1 || list[0].ID != m.ID {
			t.Fatalf("list queued: %+v", list)
		}
		b.ok("GET", "/missions?status=done", nil, &list)
		if len(list) != 0 {
			t.Fatalf("list done: %+v", list)
		}
		b.fails("GET", "/missions?status=bogus", nil, 400, "invalid_input")
		var runs []mission.Run
		b.ok("GET", "/missions/"+m.ID+"/runs", nil, &runs)
		if len(runs) != 1 || runs[0].ID != m.RootRunID || runs[0].Budget.USD != mission.DefaultBudgetUSD {
			t.Fatalf("runs: %+v", runs)
		}
		var run mission.Run
		b.ok("GET", "/runs/"+m.RootRunID, nil, &run)
		var msg struct{ ID int64 }
		b.ok("POST", "/runs/"+m.RootRunID+"/message", map[string]string{"text": "use the other file"}, &msg)
		if msg.ID == 0 {
			t.Fatal("message got no id")
		}
		b.fails("POST", "/runs/"+m.RootRunID+"/message", map[string]string{"text": "  "}, 400, "invalid_input")
		b.ok("POST", "/missions/"+m.ID+"/cancel", nil, &got)
		if got.Status != "cancelled" {
			t.Fatalf("after cancel: %s", got.Status)
		}
		b.fails("POST", "/runs/"+m.RootRunID+"/message", map[string]string{"text": "too late"}, 409, "run_ended")
		b.fails("GET", "/missions/nope", nil, 404, "not_found")
		b.fails("GET", "/runs/nope", nil, 404, "not_found")
		b.fails("POST", "/missions/nope/cancel", "{}", 404, "not_found")

		// Every mutation left an audit row naming the token.
		var audit []mission.AuditEntry
		b.ok("GET", "/system/audit", nil, &audit)
		var actions []string
		for _, a := range audit {
			if !strings.HasPrefix(a.Actor, "token:tok_") && a.Actor != "test" {
				t.Errorf("audit actor %q", a.Actor)
			}
			actions = append(actions, a.Action)
		}
		want := "mission.cancel run.message mission.create token.create token.create"
		if strings.Join(actions, " ") != want {
			t.Fatalf("audit actions %q, want %q", strings.Join(actions, " "), want)
		}
	})
}

func TestCreateMissionRefusals(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		ws := b.workspace("p")
		outside := t.TempDir()
		if err := os.Symlink(outside, filepath.Join(b.root, "escape")); err != nil {
			t.Fatal(err)
		}
		valid := func(f func(m map[string]any)) map[string]any {
			m := map[string]any{"objective": "do it", "workspace": ws, "model": "claude-opus-5-5"}
			f(m)
			return m
		}
		for name, body := range map[string]any{
			"no objective":       valid(func(m map[string]any) { delete(m, "objective") }),
			"no workspace":       valid(func(m map[string]any) { delete(m, "workspace") }),
			"dot-dot":            valid(func(m map[string]any) { m["workspace"] = "p/../../" + filepath.Base(outside) }),
			"absolute outside":   valid(func(m map[string]any) { m["workspace"] = outside }),
			"symlink escape":     valid(func(m map[string]any) { m["workspace"] = "escape" }),
			"missing dir":        valid(func(m map[string]any) { m["workspace"] = "nope" }),
			"the root itself ok": nil,
			"bad network":        valid(func(m map[string]any) { m["network"] = "everything" }),
			"bad effort":         valid(func(m map[string]any) { m["effort"] = "ludicrous" }),
			"negative budget":    valid(func(m map[string]any) { m["budgetUsd"] = -1 }),
		} {
			if body == nil {
				continue
			}
			// Checked with this test's t: the bundle's helpers belong to the
			// test that made it, and a subtest must not call its Fatalf.
			got, out := b.do("POST", "/missions", body, b.write)
			if got != 400 || !strings.Contains(string(out), `"code":"invalid_input"`) {
				t.Errorf("%s: POST /missions: %d %s; want 400 invalid_input", name, got, out)
			}
		}
		b.fails("POST", "/missions", `{"objective":"x","workspace":"p","model":"m","surprise":1}`, 400, "invalid_json")
		b.fails("POST", "/missions", `{"objective":"x"} {}`, 400, "invalid_json")
		b.fails("POST", "/missions", `{"objective":7}`, 400, "invalid_json")
		b.fails("POST", "/missions", "", 400, "invalid_json")
		big := `{"objective":"` + strings.Repeat("a", 1<<20) + `"}`
		b.fails("POST", "/missions", big, 400, "body_too_large")
		var list []mission.Mission
		b.ok("GET", "/missions", nil, &list)
		if len(list) != 0 {
			t.Fatalf("a refused request created %d missions", len(list))
		}

		// A relative workspace inside the root is fine; the model and
		// budgets default from settings.
		ctx := context.Background()
		now := time.Now().UnixMilli()
		for k, v := range map[string]string{mission.SettingDefaultModel: `"claude-sonnet-5-5"`, mission.SettingDefaultBudgetUSD: `2.5`, mission.SettingDefaultMaxTurns: `7`} {
			if err := b.st.PutSetting(ctx, k, []byte(v), now); err != nil {
				t.Fatal(err)
			}
		}
		var m mission.Mission
		b.ok("POST", "/missions", map[string]any{"objective": "x", "workspace": "p"}, &m)
		var run mission.Run
		b.ok("GET", "/runs/"+m.RootRunID, nil, &run)
		if m.Model != "claude-sonnet-5-5" || run.Budget.USD != 2.5 || run.Budget.Turns != 7 {
			t.Fatalf("defaults not applied: model %q budget %+v", m.Model, run.Budget)
		}

		// The daily cap: refused once today's spend reaches it.
		if err := b.k.SetDailyCap(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := b.st.AddSpend(ctx, time.Now().UTC().Format(time.DateOnly), 1); err != nil {
			t.Fatal(err)
		}
		b.fails("POST", "/missions", map[string]any{"objective": "x", "workspace": "p"}, 429, "daily_cap_reached")
		b.ok("GET", "/missions", nil, &list)
		if len(list) != 1 {
			t.Fatalf("%d missions after the cap refusal, want 1", len(list))
		}
	})
}

// TestStepsView: bodies over 20,000 characters are cut with a truncated
// flag, native is removed from model_call results, and after/limit page.
func TestStepsView(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		m := b.createMission()
		ctx := context.Background()
		long, _ := json.Marshal(map[string]string{"content": strings.Repeat("é", 30000)})
		rows := []store.Step{
			{Kind: "model_call", Name: "model", Effect: "model_call", Request: []byte(`{"model":"m"}`), Status: "completed",
				Result: []byte(`{"blocks":[],"native":{"secret":"raw provider body"},"stop":"end"}`)},
			{Kind: "tool_call", Name: "read_file", Effect: "read", Request: []byte(`{}`), Status: "completed", Result: long},
			{Kind: "tool_call", Name: "shell", Effect: "non_idempotent", Request: []byte(`{}`), Status: "started"},
		}
		for i, s := range rows {
			s.RunID, s.Seq, s.RequestHash, s.IdemKey, s.StartedAt = m.RootRunID, i, "h", "k", 1
			if err := b.st.InsertStep(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		var steps []mission.Step
		b.ok("GET", "/runs/"+m.RootRunID+"/steps", nil, &steps)
		if len(steps) != 3 {
			t.Fatalf("%d steps", len(steps))
		}
		if strings.Contains(string(steps[0].Result), "native") || steps[0].Truncated || !strings.Contains(string(steps[0].Result), `"stop":"end"`) {
			t.Errorf("model_call result %s truncated=%v", steps[0].Result, steps[0].Truncated)
		}
		var cut string
		if err := json.Unmarshal(steps[1].Result, &cut); err != nil || !steps[1].Truncated || len([]rune(cut)) != mission.MaxBodyChars {
			t.Errorf("long result: truncated=%v, %d chars, err %v", steps[1].Truncated, len([]rune(cut)), err)
		}
		if steps[2].Truncated || steps[2].Result != nil {
			t.Errorf("started step %+v", steps[2])
		}
		b.ok("GET", "/runs/"+m.RootRunID+"/steps?after=0&limit=1", nil, &steps)
		if len(steps) != 1 || steps[0].Seq != 1 {
			t.Fatalf("page: %+v", steps)
		}
		b.fails("GET", "/runs/"+m.RootRunID+"/steps?limit=0x1", nil, 400, "invalid_input")
		b.fails("GET", "/runs/"+m.RootRunID+"/steps?limit=501", nil, 400, "invalid_input")
		b.fails("GET", "/runs/"+m.RootRunID+"/steps?after=-2", nil, 400, "invalid_input")
		b.fails("GET", "/runs/nope/steps", nil, 404, "not_found")
	})
}

func TestWaits(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		m := b.createMission()
		ctx := context.Background()
		for i, kind := range []string{"approval", "question"} {
			w := store.Wait{ID: "w-" + kind, RunID: m.RootRunID, MissionID: m.ID, StepSeq: i, Kind: kind, Payload: []byte(`{"tool":"shell"}`), Status: "pending", CreatedAt: int64(i + 1)}
			if err := b.st.InsertWait(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		var ws []mission.Wait
		b.ok("GET", "/waits?status=pending", nil, &ws)
		if len(ws) != 2 {
			t.Fatalf("pending waits: %+v", ws)
		}
		b.fails("GET", "/waits?status=maybe", nil, 400, "invalid_input")
		b.fails("POST", "/waits/w-approval/resolve", map[string]any{"answer": "yes"}, 400, "invalid_input")
		b.fails("POST", "/waits/w-question/resolve", map[string]any{"approved": true}, 400, "invalid_input")
		b.fails("POST", "/waits/w-question/resolve", map[string]any{"answer": "   "}, 400, "invalid_input")
		b.fails("POST", "/waits/nope/resolve", map[string]any{"answer": "x"}, 404, "not_found")
		var w mission.Wait
		b.ok("POST", "/waits/w-approval/resolve", map[string]any{"approved": true, "remember": true}, &w)
		if w.Status != "resolved" || !strings.HasPrefix(w.Actor, "token:") || !strings.Contains(string(w.Resolution), `"approved":true`) {
			t.Fatalf("resolved: %+v", w)
		}
		b.fails("POST", "/waits/w-approval/resolve", map[string]any{"approved": false}, 409, "wait_not_pending")
		b.ok("POST", "/waits/w-question/resolve", map[string]any{"answer": "blue"}, &w)
		b.ok("GET", "/waits?status=pending", nil, &ws)
		if len(ws) != 0 {
			t.Fatalf("still pending: %+v", ws)
		}
		b.auditHas("wait.resolve wait.resolve mission.create")
	})
}

func TestPolicyRules(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		var r mission.Rule
		b.ok("POST", "/policy/rules", map[string]any{"tool": "shell", "commandPrefix": "go test", "decision": "allow", "projectId": "p1"}, &r)
		var g mission.Rule
		b.ok("POST", "/policy/rules", map[string]any{"tool": "web_fetch", "decision": "deny"}, &g)
		b.fails("POST", "/policy/rules", map[string]any{"tool": "shell", "decision": "maybe"}, 400, "invalid_input")
		b.fails("POST", "/policy/rules", map[string]any{"tool": "read_file", "commandPrefix": "x", "decision": "allow"}, 400, "invalid_input")
		b.fails("POST", "/policy/rules", map[string]any{"tool": "a b", "decision": "allow"}, 400, "invalid_input")
		var rules []mission.Rule
		b.ok("GET", "/policy/rules", nil, &rules)
		if len(rules) != 1 || rules[0].ID != g.ID {
			t.Fatalf("global rules: %+v", rules)
		}
		b.ok("GET", "/policy/rules?projectId=p1", nil, &rules)
		if len(rules) != 2 {
			t.Fatalf("project rules: %+v", rules)
		}
		b.ok("DELETE", "/policy/rules/"+r.ID, nil, nil)
		b.fails("DELETE", "/policy/rules/"+r.ID, nil, 404, "not_found")
		b.auditHas("policy.delete policy.add policy.add")
	})
}

// TestSpend: real numbers from spend_days, and by-model sums that agree
// with them.
func TestSpend(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		m := b.createMission()
		ctx := context.Background()
		now := time.Now().UTC()
		twoAgo := now.AddDate(0, 0, -2)
		eightAgo := now.AddDate(0, 0, -8)
		costs := []struct {
			at    time.Time
			model string
			usd   float64
		}{{now, "a", 0.5}, {now, "b", 0.25}, {twoAgo, "a", 1}, {eightAgo, "a", 9}}
		for i, c := range costs {
			s := store.Step{RunID: m.RootRunID, Seq: i, Kind: "model_call", Name: "model", Effect: "model_call", RequestHash: "h", IdemKey: "k",
				Request: []byte(`{"model":"` + c.model + `"}`), Status: "completed", CostUSD: c.usd, StartedAt: c.at.UnixMilli(), EndedAt: c.at.UnixMilli()}
			if err := b.st.InsertStep(ctx, s); err != nil {
				t.Fatal(err)
			}
			if err := b.st.AddSpend(ctx, c.at.Format(time.DateOnly), c.usd); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.k.SetDailyCap(ctx, 10); err != nil {
			t.Fatal(err)
		}
		var sp mission.Spend
		b.ok("GET", "/spend", nil, &sp)
		if sp.Today != now.Format(time.DateOnly) || sp.TodayUSD != 0.75 || sp.CapUSD != 10 || sp.CapReached || len(sp.Days) != 7 {
			t.Fatalf("spend %+v", sp)
		}
		if sp.Days[4].Day != twoAgo.Format(time.DateOnly) || sp.Days[4].USD != 1 {
			t.Fatalf("two days ago: %+v", sp.Days)
		}
		var days, models float64
		for _, d := range sp.Days {
			days += d.USD
		}
		for _, bm := range sp.ByModel {
			models += bm.USD
		}
		if days != 1.75 || models != days || len(sp.ByModel) != 2 || sp.ByModel[0].Model != "a" || sp.ByModel[0].USD != 1.5 || sp.ByModel[0].Calls != 2 {
			t.Fatalf("days %v, by model %+v", days, sp.ByModel)
		}
	})
}

func TestSystemStatus(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		b.createMission()
		ctx := context.Background()
		now := time.Now().UnixMilli()
		for id, seen := range map[string]int64{"live": now - 5000, "stale": now - 120000} {
			if err := b.st.UpsertWorker(ctx, store.Worker{ID: id, Version: "v", Hostname: "h", StartedAt: seen, LastSeen: seen}); err != nil {
				t.Fatal(err)
			}
		}
		var st mission.Status
		b.ok("GET", "/system/status", nil, &st)
		if !st.DB.OK || st.DB.Dialect != db.Driver || !st.Providers.Anthropic || !st.Providers.OpenAI || st.Version != "test" {
			t.Fatalf("status %+v", st)
		}
		if st.WorkspaceRoot != b.root || st.Worker.Count != 1 || st.Worker.Workers[0].Version != "v" {
			t.Fatalf("root %q, %d workers alive, %+v", st.WorkspaceRoot, st.Worker.Count, st.Worker.Workers)
		}
		if !st.Worker.Alive || len(st.Worker.Workers) != 2 || !st.Worker.Workers[0].Alive || st.Worker.Workers[1].Alive || st.Worker.LastSeenAt != now-5000 {
			t.Fatalf("workers %+v", st.Worker)
		}
		if st.Counts.MissionsQueued != 1 || st.Counts.PendingWaits != 0 {
			t.Fatalf("counts %+v", st.Counts)
		}
		if err := b.st.DeleteWorker(ctx, "live"); err != nil {
			t.Fatal(err)
		}
		b.ok("GET", "/system/status", nil, &st)
		if st.Worker.Alive {
			t.Fatal("alive with only a stale worker")
		}
	})
}

// auditHas checks the newest audit actions, newest first; refused requests
// leave none.
func (b *bundle) auditHas(want string) {
	b.t.Helper()
	var audit []mission.AuditEntry
	b.ok("GET", "/system/audit?limit="+strconv.Itoa(len(strings.Fields(want))), nil, &audit)
	var got []string
	for _, a := range audit {
		if !strings.HasPrefix(a.Actor, "token:tok_") {
			b.t.Errorf("audit actor %q", a.Actor)
		}
		got = append(got, a.Action)
	}
	if strings.Join(got, " ") != want {
		b.t.Fatalf("audit %q, want %q", strings.Join(got, " "), want)
	}
}
