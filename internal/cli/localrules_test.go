package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// exitOf is err's exit code: that of an *exitError, 1 for another error, 0
// for none.
func exitOf(err error) exitCode {
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		return ee.code
	case err != nil:
		return 1
	}
	return 0
}

// TestLocalCreateRules: aos run creates its mission through the mission
// service, so the rules the API enforces hold for it too, and a refused
// run creates nothing.
func TestLocalCreateRules(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx := context.Background()
		repo := gitRepo(t, t.TempDir())
		ok := runFlags{project: repo, model: DefaultModel, budgetUSD: 1, maxTurns: 5, network: "none"}
		for _, c := range []struct {
			name    string
			setting string // a daily cap setting stored first
			f       func(f runFlags) runFlags
			code    exitCode
			want    string
		}{
			{name: "unreadable daily cap", setting: `"a lot"`, code: 1, want: "daily cap"},
			{name: "daily cap reached", setting: `0.000001`, code: exitUnfinished, want: "daily cap"},
			{name: "unknown effort", f: func(f runFlags) runFlags { f.effort = "ludicrous"; return f }, code: exitUsage, want: "effort"},
			{name: "negative budget", f: func(f runFlags) runFlags { f.budgetUSD = -1; return f }, code: exitUsage, want: "negative"},
			{name: "negative wall time", f: func(f runFlags) runFlags { f.wallSec = -5; return f }, code: exitUsage, want: "negative"},
			{name: "unknown model", f: func(f runFlags) runFlags { f.model = "claude-nonesuch-1"; return f }, code: exitUsage, want: "is not known to its provider"},
			{name: "scripted model without a server", f: func(f runFlags) runFlags { f.model = "script:x"; return f }, code: exitUsage, want: "ANTHROPIC_BASE_URL"},
			{name: "control character in the project", f: func(f runFlags) runFlags { f.project = repo + "\x1b[2J"; return f }, code: exitUsage, want: "control characters"},
		} {
			t.Run(c.name, func(t *testing.T) {
				db := storetest.New(t, db.Driver)
				s := localSession(t, db, io.Discard, nil)
				if c.setting != "" {
					if err := db.Store.PutSetting(ctx, kernel.SettingDailyBudgetUSD, []byte(c.setting), time.Now().UnixMilli()); err != nil {
						t.Fatal(err)
					}
					if c.code == exitUnfinished {
						spend(t, s, 1)
					}
				}
				f := ok
				if c.f != nil {
					f = c.f(f)
				}
				_, err := s.create(ctx, f, "fix it")
				if exitOf(err) != c.code || err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("create: %v (exit %d); want exit %d saying %q", err, exitOf(err), c.code, c.want)
				}
				if ms, err := db.Store.ListMissions(ctx, store.ListMissionsParams{Limit: 10}); err != nil || len(ms) != 0 {
					t.Fatalf("a refused run left %d missions (%v)", len(ms), err)
				}
			})
		}
	})
}

// spend records usd of spend today (UTC).
func spend(t *testing.T, s *session, usd float64) {
	t.Helper()
	if err := s.st.AddSpend(context.Background(), time.Now().UTC().Format(time.DateOnly), usd); err != nil {
		t.Fatal(err)
	}
}

// TestLocalCreate: a local mission may live anywhere the owner says,
// outside the workspace root too, with its symbolic links resolved; its
// title is cut on a character boundary; only aos run and resume claim it;
// and its creation is audited.
func TestLocalCreate(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx := context.Background()
		repo := gitRepo(t, t.TempDir())
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(repo, link); err != nil {
			t.Fatal(err)
		}
		s := localSession(t, db, io.Discard, nil)
		objective := strings.Repeat("a", 79) + "ééé\nsecond line"
		mid, err := s.create(ctx, runFlags{project: link, model: DefaultModel, budgetUSD: 1, maxTurns: 5, network: "none"}, objective)
		if err != nil {
			t.Fatalf("create outside the workspace root %s: %v", s.cfg.WorkspaceRoot, err)
		}
		m, err := s.st.GetMission(ctx, mid)
		if err != nil {
			t.Fatal(err)
		}
		if want := strings.Repeat("a", 79) + "é…"; m.Title != want || !utf8.ValidString(m.Title) {
			t.Errorf("title %q; want %q", m.Title, want)
		}
		var in engine.Input
		if err := json.Unmarshal(m.Spec, &in); err != nil || in.Workspace != repo {
			t.Errorf("workspace %q (%v); want the resolved %s", in.Workspace, err, repo)
		}
		r, err := s.st.GetRun(ctx, m.RootRunID)
		if err != nil || r.Logic != engine.LocalLogicName {
			t.Errorf("root run logic %q (%v); want %s", r.Logic, err, engine.LocalLogicName)
		}
		audit, err := s.st.ListAudit(ctx, store.ListAuditParams{Limit: 10})
		if err != nil || len(audit) != 1 || audit[0].Action != "mission.create" || audit[0].Target != mid || !strings.HasPrefix(audit[0].Actor, "cli:") {
			t.Errorf("audit %+v (%v); want one mission.create of %s by cli:…", audit, err, mid)
		}
	})
}

// TestLocalResolveRules: the local aos answer/approve/deny resolve through
// the mission service: the same checks as the API, an audit entry, and a
// database fault reported as such, not as "no such wait".
func TestLocalResolveRules(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx := context.Background()
		s := localSession(t, db, io.Discard, nil)
		mid, err := s.create(ctx, runFlags{project: gitRepo(t, t.TempDir()), model: DefaultModel, network: "none"}, "x")
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.st.GetMission(ctx, mid)
		if err != nil {
			t.Fatal(err)
		}
		for i, kind := range []string{"approval", "question"} {
			w := store.Wait{ID: "w-" + kind, RunID: m.RootRunID, MissionID: mid, StepSeq: i, Kind: kind, Payload: []byte(`{}`), Status: "pending", CreatedAt: 1}
			if err := s.st.InsertWait(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		yes := true
		for _, c := range []struct {
			name, wait string
			r          mission.Resolution
			code       exitCode
			want       string
		}{
			{"answer over 8 KiB", "w-question", mission.Resolution{Answer: strings.Repeat("x", 8<<10+1)}, exitUsage, "8 KiB"},
			{"answer not UTF-8", "w-question", mission.Resolution{Answer: "bad \xff"}, exitUsage, "UTF-8"},
			{"empty answer", "w-question", mission.Resolution{Answer: "  \n"}, exitUsage, "non-empty"},
			{"approve a question", "w-question", mission.Resolution{Approved: &yes}, exitUsage, "answer"},
			{"reason over 8 KiB", "w-approval", mission.Resolution{Approved: &yes, Reason: strings.Repeat("x", 8<<10+1)}, exitUsage, "8 KiB"},
			{"no such wait", "w-nope", mission.Resolution{Answer: "x"}, exitNotFound, "no wait w-nope"},
			{"answered", "w-question", mission.Resolution{Answer: "blue"}, 0, ""},
			{"answered twice", "w-question", mission.Resolution{Answer: "green"}, 1, "wait_not_pending"},
		} {
			err := resolveLocal(ctx, s.service(), io.Discard, c.wait, c.r)
			if exitOf(err) != c.code || (err != nil && !strings.Contains(err.Error(), c.want)) {
				t.Errorf("%s: %v (exit %d); want exit %d saying %q", c.name, err, exitOf(err), c.code, c.want)
			}
		}
		audit, err := s.st.ListAudit(ctx, store.ListAuditParams{Limit: 10})
		if err != nil || len(audit) != 2 || audit[0].Action != "wait.resolve" || audit[0].Target != "w-question" {
			t.Errorf("audit %+v (%v); want wait.resolve of w-question, newest first", audit, err)
		}

		// A database fault is a failure with its cause, never "not found".
		broken := storetest.New(t, db.Driver)
		bs := localSession(t, broken, io.Discard, nil)
		_ = broken.Store.Close()
		err = resolveLocal(ctx, bs.service(), io.Discard, "w-question", mission.Resolution{Answer: "x"})
		if exitOf(err) != 1 || strings.Contains(err.Error(), "not found") || strings.Contains(err.Error(), "no wait") {
			t.Errorf("closed database: %v (exit %d); want exit 1 with the fault", err, exitOf(err))
		}
	})
}

// TestTerminalAnswersGoThroughTheService: aos run's inline prompt and
// --on-ask deny resolve through the mission service: an empty answer is
// asked again instead of being recorded, the end of input leaves the
// question pending, and each resolution is audited.
func TestTerminalAnswersGoThroughTheService(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx := context.Background()
		var out strings.Builder
		s := localSession(t, db, &out, nil)
		mid, err := s.create(ctx, runFlags{project: gitRepo(t, t.TempDir()), model: DefaultModel, network: "none"}, "x")
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.st.GetMission(ctx, mid)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range []string{"w-typed", "w-eof", "w-denied"} {
			kind := "question"
			if id == "w-denied" {
				kind = "approval"
			}
			w := store.Wait{ID: id, RunID: m.RootRunID, MissionID: mid, StepSeq: i, Kind: kind, Payload: []byte(`{}`), Status: "pending", CreatedAt: 1}
			if err := s.st.InsertWait(ctx, w); err != nil {
				t.Fatal(err)
			}
		}
		tl := newTimeline(s, mid)
		tl.in = bufio.NewReader(strings.NewReader("\n   \nblue\n"))
		if err := tl.ask(ctx, "w-typed", "question", nil); err != nil {
			t.Fatalf("ask: %v", err)
		}
		tl.in = bufio.NewReader(strings.NewReader(""))
		if err := tl.ask(ctx, "w-eof", "question", nil); err != nil {
			t.Fatalf("ask at the end of input: %v", err)
		}
		s.onAsk = "deny"
		if err := tl.waitCreated(ctx, "w-denied", "approval", []byte(`{}`)); err != nil {
			t.Fatalf("--on-ask deny: %v", err)
		}
		for id, want := range map[string]string{"w-typed": `"answer":"blue"`, "w-eof": "", "w-denied": `"approved":false`} {
			w, err := s.st.GetWait(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if (want == "") != (w.Status == "pending") || !strings.Contains(string(w.Resolution), want) {
				t.Errorf("wait %s: %s %s; want %s", id, w.Status, w.Resolution, want)
			}
		}
		if n := strings.Count(out.String(), "non-empty"); n != 2 {
			t.Errorf("the empty answers were refused %d times at the terminal, want 2:\n%s", n, out.String())
		}
		audit, err := s.st.ListAudit(ctx, store.ListAuditParams{Limit: 10})
		if err != nil || len(audit) != 3 || audit[0].Action != "wait.resolve" || audit[1].Action != "wait.resolve" {
			t.Errorf("audit %+v (%v); want two wait.resolve after mission.create", audit, err)
		}
	})
}
