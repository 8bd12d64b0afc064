package mission_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/hostconfig"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".tmp", []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestHostConfigDefaultsAndPinning: a mission takes its defaults and route
// from the project's configuration files over the settings, an explicit
// request beats both, a change to the file is picked up without a restart
// by the next mission while an existing one stays pinned to its revision,
// and an invalid change keeps the last valid revision.
func TestHostConfigDefaultsAndPinning(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "calc")
	if err := demo.WriteRepo(repo); err != nil {
		t.Fatal(err)
	}
	repoFile := filepath.Join(repo, hostconfig.RepoPath)
	repoYAML := `version: 1
defaults:
  model: claude-haiku-5-5
  effort: low
  budgets: {usd: 1.25, max_turns: 7}
aliases: {spare: claude-opus-5-5}
selection:
  failure_budgets: {model: 3}
  rules:
    - {id: main, targets: [claude-haiku-5-5, spare]}
`
	writeFile(t, repoFile, repoYAML)
	userFile := filepath.Join(t.TempDir(), "aos", "config.yaml")
	writeFile(t, userFile, "version: 1\nprojects:\n  - path: "+repo+"\n    overrides: {defaults: {effort: high}}\n")
	reg := hostconfig.NewRegistry(userFile, nil)
	ctx := context.Background()
	if err := reg.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	db := storetest.New(t, "sqlite")
	svc := mission.New(kernel.New(db.Store, kernel.Options{}), mission.Options{WorkspaceRoot: root, HostConfig: reg})
	settingModel, settingUSD := "claude-sonnet-5-5", 9.0
	if _, err := svc.PutSettings(ctx, "t", mission.Settings{DefaultModel: &settingModel, DefaultBudgetUSD: &settingUSD}); err != nil {
		t.Fatal(err)
	}
	create := func(req mission.CreateRequest) (mission.Mission, engine.Input, kernel.Budget) {
		t.Helper()
		req.Objective, req.Workspace = "fix it", repo
		m, err := svc.CreateMission(ctx, "t", req)
		if err != nil {
			t.Fatal(err)
		}
		return m, specOf(t, svc, m.ID), budgetOf(t, db, m.RootRunID)
	}
	snapA, err := reg.Snapshot(repo)
	if err != nil {
		t.Fatal(err)
	}

	m1, in1, b1 := create(mission.CreateRequest{})
	if in1.Model != "claude-haiku-5-5" || in1.Effort != "high" || b1.USD != 1.25 || b1.Turns != 7 || in1.ConfigRevision != snapA.Revision {
		t.Fatalf("config defaults: model %s effort %s budget %+v revision %s (want %s)", in1.Model, in1.Effort, b1, in1.ConfigRevision, snapA.Revision)
	}
	if r := in1.Route; r == nil || r.RuleID != "main" || strings.Join(r.Fallbacks, ",") != "claude-opus-5-5" || r.FailureBudget != 3 || r.FailoverOn[0] != "quota" || r.PolicyRevision == "" || !strings.Contains(r.Reason, "rule main") {
		t.Fatalf("route %+v", in1.Route)
	}
	_, in2, b2 := create(mission.CreateRequest{Model: "gpt-6-luna", Effort: "max", BudgetUSD: ptr(2.0)})
	if in2.Model != "gpt-6-luna" || in2.Effort != "max" || b2.USD != 2 || strings.Join(in2.Route.Fallbacks, ",") != "claude-haiku-5-5,claude-opus-5-5" {
		t.Fatalf("explicit request: model %s effort %s budget %+v route %+v", in2.Model, in2.Effort, b2, in2.Route)
	}

	// A change, picked up without a restart.
	writeFile(t, repoFile, strings.ReplaceAll(repoYAML, "claude-haiku-5-5", "claude-fable-5-2"))
	poll(t, "new revision", func() bool { s, _ := reg.Snapshot(repo); return s.Revision != snapA.Revision })
	snapB, _ := reg.Snapshot(repo)
	_, in3, _ := create(mission.CreateRequest{})
	if in3.ConfigRevision != snapB.Revision || in3.Model != "claude-fable-5-2" {
		t.Fatalf("after the change: model %s revision %s, want claude-fable-5-2 at %s", in3.Model, in3.ConfigRevision, snapB.Revision)
	}
	if in3.Route.RuleID != "main" {
		t.Fatalf("route after the change: %+v", in3.Route)
	}
	// The first mission stays pinned.
	if pinned := specOf(t, svc, m1.ID); pinned.ConfigRevision != snapA.Revision || pinned.Model != "claude-haiku-5-5" || pinned.Effort != "high" {
		t.Fatalf("the pinned mission changed: %+v", pinned)
	}

	if eff, ok, err := svc.ProjectConfig(repo, ""); err != nil || !ok || eff.Revision != snapB.Revision || *eff.Defaults.Effort != "high" {
		t.Fatalf("ProjectConfig = %v %v %v", eff.Revision, ok, err)
	}
	// An invalid change: the last valid revision stays in use.
	writeFile(t, repoFile, repoYAML+"token: abc\n")
	poll(t, "invalid file seen", func() bool { return reg.LastError(repo) != nil })
	if _, in4, _ := create(mission.CreateRequest{}); in4.ConfigRevision != snapB.Revision {
		t.Fatalf("an invalid file changed the revision to %s", in4.ConfigRevision)
	}

	// Without any valid revision, creation is refused with the file and line.
	other := filepath.Join(root, "other")
	if err := demo.WriteRepo(other); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(other, hostconfig.RepoPath), "version: 1\ndefaults: {effort: huge}\n")
	_, err = svc.CreateMission(ctx, "t", mission.CreateRequest{Objective: "x", Workspace: other})
	if !errors.Is(err, mission.ErrInvalidInput) || !strings.Contains(err.Error(), hostconfig.RepoPath+":2: defaults.effort") {
		t.Fatalf("create with an invalid config: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func specOf(t *testing.T, svc *mission.Service, id string) engine.Input {
	t.Helper()
	m, err := svc.GetMission(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var in engine.Input
	if err := json.Unmarshal(m.Spec, &in); err != nil {
		t.Fatal(err)
	}
	return in
}

func budgetOf(t *testing.T, db storetest.DB, runID string) kernel.Budget {
	t.Helper()
	r, err := db.Store.GetRun(context.Background(), runID)
	if err != nil {
		t.Fatal(err)
	}
	return kernel.Budget{USD: r.BudgetUSD, Turns: r.BudgetTurns, WallSec: r.BudgetWallSec}
}
