package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestMissionCommands runs each API command against the real server, on
// SQLite and PostgreSQL, in its human and --json forms.
func TestMissionCommands(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		r := setupRemote(t, db)
		ws := r.workspace("p")

		// create
		out := r.ok("mission", "create", "fix the flaky test", "--workspace", ws, "--criteria", "tests pass", "--criteria", "no new deps",
			"--model", "claude-opus-5-5", "--budget-usd", "0.5", "--max-turns", "7", "--network", "none")
		id := regexp.MustCompile(`mission ([0-9a-f-]{36}) created \(queued`).FindStringSubmatch(out)
		if id == nil || !strings.Contains(out, "aos mission watch "+id[1]) {
			t.Fatalf("create:\n%s", out)
		}
		var m mission.Mission
		r.okJSON(&m, "mission", "create", "second mission", "--workspace", "p", "--model", "claude-opus-5-5")
		if m.ID == "" || m.Status != "queued" || m.RootRunID == "" {
			t.Fatalf("create --json: %+v", m)
		}
		first, err := r.svc.GetMission(t.Context(), id[1])
		if err != nil || !strings.Contains(string(first.Spec), `"tests pass"`) || !strings.Contains(string(first.Spec), `"no new deps"`) {
			t.Fatalf("criteria did not reach the mission: %s %v", first.Spec, err)
		}
		runs, err := r.svc.ListRuns(t.Context(), id[1])
		if err != nil || len(runs) != 1 || runs[0].Budget.USD != 0.5 || runs[0].Budget.Turns != 7 {
			t.Fatalf("budget did not reach the run: %+v %v", runs, err)
		}

		// ls
		out = r.ok("mission", "ls")
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(out, short(m.ID)) || !strings.Contains(out, "$0.0000") ||
			strings.Contains(out, m.ID) {
			t.Fatalf("ls:\n%s", out)
		}
		if col := strings.Index(lines[0], "STATUS"); strings.Index(lines[1], "queued") != col || strings.Index(lines[2], "queued") != col {
			t.Fatalf("ls columns are not aligned:\n%s", out)
		}
		var ms []mission.Mission
		r.okJSON(&ms, "mission", "ls", "--status", "queued")
		if len(ms) != 2 {
			t.Fatalf("ls --json: %+v", ms)
		}
		if out := r.ok("mission", "ls", "--status", "done"); strings.TrimSpace(out) != "no missions" {
			t.Fatalf("ls --status done:\n%s", out)
		}

		// show, by a short id
		out = r.ok("mission", "show", short(m.ID))
		for _, want := range []string{"mission  " + m.ID, "status   queued", "spent    $0.0000", "runs:", short(m.RootRunID), "no pending waits"} {
			if !strings.Contains(out, want) {
				t.Fatalf("show lacks %q:\n%s", want, out)
			}
		}
		var d missionDetail
		r.okJSON(&d, "mission", "show", m.ID)
		if d.Mission.ID != m.ID || len(d.Runs) != 1 || d.Runs[0].ID != m.RootRunID || d.Waits == nil && len(d.Waits) != 0 {
			t.Fatalf("show --json: %+v", d)
		}

		// message goes to the root run
		out = r.ok("mission", "message", m.ID, "use the stdlib only")
		if !strings.Contains(out, "sent to mission "+m.ID) {
			t.Fatalf("message:\n%s", out)
		}
		var mr api.MessageResponse
		r.okJSON(&mr, "mission", "message", m.ID, "and keep it short")
		if mr.ID == 0 {
			t.Fatalf("message --json: %+v", mr)
		}

		// cancel
		out = r.ok("mission", "cancel", m.ID)
		if !strings.Contains(out, "cancellation requested") {
			t.Fatalf("cancel:\n%s", out)
		}
		var cm mission.Mission
		r.okJSON(&cm, "mission", "cancel", id[1])
		if cm.ID != id[1] {
			t.Fatalf("cancel --json: %+v", cm)
		}

		// waits: none pending
		if out := r.ok("waits"); strings.TrimSpace(out) != "no pending waits" {
			t.Fatalf("waits:\n%s", out)
		}
		var waits []mission.Wait
		r.okJSON(&waits, "waits")
		if len(waits) != 0 {
			t.Fatalf("waits --json: %+v", waits)
		}

		// policy add, ls, rm
		out = r.ok("policy", "add", "--tool", "shell", "--command-prefix", "go test", "--decision", "allow", "--note", "tests are safe")
		ruleID := regexp.MustCompile(`rule (\S+) added: allow shell go test`).FindStringSubmatch(out)
		if ruleID == nil {
			t.Fatalf("policy add:\n%s", out)
		}
		var rule mission.Rule
		r.okJSON(&rule, "policy", "add", "--tool", "shell", "--command-prefix", "rm -rf", "--decision", "deny")
		out = r.ok("policy", "ls")
		if !strings.Contains(out, ruleID[1]) || !strings.Contains(out, "go test") || !strings.Contains(out, rule.ID) || !strings.HasPrefix(out, "ID") {
			t.Fatalf("policy ls:\n%s", out)
		}
		var rules []mission.Rule
		r.okJSON(&rules, "policy", "ls")
		if len(rules) != 2 {
			t.Fatalf("policy ls --json: %+v", rules)
		}
		if out := r.ok("policy", "rm", ruleID[1]); !strings.Contains(out, "removed") {
			t.Fatalf("policy rm:\n%s", out)
		}
		r.okJSON(&rules, "policy", "ls")
		if len(rules) != 1 || rules[0].ID != rule.ID {
			t.Fatalf("after rm: %+v", rules)
		}

		// spend, models, status
		if out := r.ok("spend"); !strings.Contains(out, "today ") || !strings.Contains(out, "$0.0000") {
			t.Fatalf("spend:\n%s", out)
		}
		var sp mission.Spend
		r.okJSON(&sp, "spend")
		if sp.Today == "" {
			t.Fatalf("spend --json: %+v", sp)
		}
		if out := r.ok("models"); !strings.Contains(out, "claude-opus-5-5") || !strings.HasPrefix(out, "ID") || !strings.Contains(out, "$") {
			t.Fatalf("models:\n%s", out)
		}
		var models []mission.Model
		r.okJSON(&models, "models")
		if len(models) == 0 {
			t.Fatal("models --json: none")
		}
		out = r.ok("status")
		if !strings.Contains(out, "database") || !strings.Contains(out, "ok "+db.Driver) || !strings.Contains(out, "anthropic key set, openai no key") {
			t.Fatalf("status:\n%s", out)
		}
		var st mission.Status
		r.okJSON(&st, "status")
		if !st.DB.OK || st.Version != "test" {
			t.Fatalf("status --json: %+v", st)
		}
	})
}
