package mission_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/hostconfig"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

// POST /missions with engine command:PATH creates a mission run by the
// backend logic; builtin (or none) by the agent loop; an unknown engine,
// a relative command path and network open are refused.
func TestCreateMissionEngine(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	db := storetest.New(t, "sqlite")
	svc := mission.New(kernel.New(db.Store, kernel.Options{}), mission.Options{WorkspaceRoot: root})
	// Not offered before it passed its self-test.
	_, err := svc.CreateMission(context.Background(), "test", mission.CreateRequest{Objective: "x", Workspace: "p", Engine: "command:/usr/bin/true"})
	var me *mission.Error
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "aos engine check") {
		t.Fatalf("an unchecked engine: %v", err)
	}
	b, _ := os.ReadFile("/usr/bin/true")
	sum := sha256.Sum256(b)
	rec, _ := json.Marshal(backend.CheckRecord{Engine: "command:/usr/bin/true", Passed: true, BinarySHA256: hex.EncodeToString(sum[:])})
	if err := db.Store.PutSetting(context.Background(), backend.CheckKey("command:/usr/bin/true"), rec, 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		engine, network, logic string
	}{
		{"command:/usr/bin/true", "", backend.LogicName},
		{"builtin", "", "aos.agent"},
		{"", "", "aos.agent"},
		{"nope", "", ""},
		{"command:rel/path", "", ""},
		// Network open reaches an engine too (issue 12); a bad value does not.
		{"command:/usr/bin/true", "open", backend.LogicName},
		{"command:/usr/bin/true", "bogus", ""},
	} {
		m, err := svc.CreateMission(context.Background(), "test", mission.CreateRequest{Objective: "x", Workspace: "p", Model: "claude-opus-5-5",
			Engine: tc.engine, Network: tc.network, Verify: [][]string{{"go", "test", "./..."}}})
		if tc.logic == "" {
			var me *mission.Error
			if !errors.As(err, &me) {
				t.Errorf("engine %q network %q: %v, want an invalid request", tc.engine, tc.network, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("engine %q: %v", tc.engine, err)
		}
		r, err := db.Store.GetRun(context.Background(), m.RootRunID)
		if err != nil || r.Logic != tc.logic {
			t.Errorf("engine %q: logic %q (%v), want %q", tc.engine, r.Logic, err, tc.logic)
		}
	}
}

// A project's default engine (defaults.engine in .aos/config.yaml) runs a
// mission that names none; an explicit engine (builtin included) wins.
// The project's verification.allow and a local request's VerifyAllow reach
// the engine's input, and a local mission (aos run --engine) gets the
// local logic that only aos run's process claims.
func TestCreateMissionDefaultEngine(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	repo := filepath.Join(root, "p")
	writeFile(t, filepath.Join(repo, hostconfig.RepoPath), "version: 1\ndefaults:\n  engine: command:/usr/bin/true\nverification:\n  allow: [\"go test\"]\n")
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"commit", "-q", "-m", "base"}} {
		if r, err := gitx.Run(context.Background(), gitx.Cmd{Dir: repo, Args: args, Env: gitx.DefaultIdentity}); err != nil || r.Code != 0 {
			t.Fatalf("git %v: %v %s", args, err, r.Combined)
		}
	}
	reg := hostconfig.NewRegistry(filepath.Join(t.TempDir(), "aos", "config.yaml"), nil)
	if err := reg.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	db := storetest.New(t, "sqlite")
	svc := mission.New(kernel.New(db.Store, kernel.Options{}), mission.Options{WorkspaceRoot: root, HostConfig: reg})
	b, _ := os.ReadFile("/usr/bin/true")
	sum := sha256.Sum256(b)
	rec, _ := json.Marshal(backend.CheckRecord{Engine: "command:/usr/bin/true", Passed: true, BinarySHA256: hex.EncodeToString(sum[:])})
	if err := db.Store.PutSetting(context.Background(), backend.CheckKey("command:/usr/bin/true"), rec, 1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		req   mission.CreateRequest
		logic string
		allow []string
	}{
		{"project default", mission.CreateRequest{Workspace: "p"}, backend.LogicName, []string{"go test"}},
		{"explicit builtin", mission.CreateRequest{Workspace: "p", Engine: "builtin"}, "aos.agent", nil},
		{"local", mission.CreateRequest{Workspace: repo, Local: true, VerifyAllow: []string{"make check"}}, backend.LocalLogicName, []string{"make check", "go test"}},
	} {
		tc.req.Objective, tc.req.Model = "x", "claude-opus-5-5"
		m, err := svc.CreateMission(context.Background(), "test", tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		r, err := db.Store.GetRun(context.Background(), m.RootRunID)
		if err != nil || r.Logic != tc.logic {
			t.Errorf("%s: logic %q (%v), want %q", tc.name, r.Logic, err, tc.logic)
			continue
		}
		if tc.allow == nil {
			continue
		}
		var in backend.Input
		if err := json.Unmarshal(r.Input, &in); err != nil {
			t.Fatal(err)
		}
		if in.Engine != "command:/usr/bin/true" || strings.Join(in.VerifyAllow, ",") != strings.Join(tc.allow, ",") {
			t.Errorf("%s: engine %q allow %q, want %q", tc.name, in.Engine, in.VerifyAllow, tc.allow)
		}
	}
}
