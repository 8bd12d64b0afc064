package mission_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestDefaultModel: a mission that names no model gets the owner's default
// model, else the default model of the first provider whose API key is set;
// a scripted model server's base URL alone makes no real model available,
// and then creation is refused with an error that says how to choose one.
func TestDefaultModel(t *testing.T) {
	// A reachable local endpoint: the scripted server's Chat Completions,
	// listing one local model that can call tools.
	local := scripttest.Start(t, "models: [qwen3-coder]\nscripts: []\n").OpenAIBaseURL()
	for _, tc := range []struct {
		name    string
		env     map[string]string
		setting string
		want    string // "" means refused
	}{
		{name: "nothing configured"},
		{name: "only the scripted model server", env: map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}},
		{name: "Anthropic key", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, want: "claude-opus-5-5"},
		{name: "OpenAI key", env: map[string]string{"OPENAI_API_KEY": "k"}, want: "gpt-6.1-sol"},
		{name: "both keys: Anthropic first", env: map[string]string{"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}, want: "claude-opus-5-5"},
		{name: "the owner's setting wins", env: map[string]string{"ANTHROPIC_API_KEY": "k"}, setting: "claude-haiku-5-5", want: "claude-haiku-5-5"},
		{name: "the owner's setting without keys", setting: "gpt-6-luna", want: "gpt-6-luna"},
		{name: "a reachable local endpoint", env: map[string]string{"AOS_LOCAL_BASE_URL": local}, want: "local:qwen3-coder"},
		{name: "a key before the local endpoint", env: map[string]string{"AOS_LOCAL_BASE_URL": local, "OPENAI_API_KEY": "k"}, want: "gpt-6.1-sol"},
		{name: "an unreachable local endpoint", env: map[string]string{"AOS_LOCAL_BASE_URL": "http://127.0.0.1:1/v1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if err := os.Mkdir(filepath.Join(root, "ws"), 0o755); err != nil {
				t.Fatal(err)
			}
			getenv := func(k string) string { return tc.env[k] }
			svc := mission.New(kernel.New(storetest.New(t, "sqlite").Store, kernel.Options{}), mission.Options{WorkspaceRoot: root, Getenv: getenv})
			ctx := context.Background()
			if tc.setting != "" {
				if _, err := svc.PutSettings(ctx, "test", mission.Settings{DefaultModel: &tc.setting}); err != nil {
					t.Fatal(err)
				}
			}
			m, err := svc.CreateMission(ctx, "test", mission.CreateRequest{Objective: "x", Workspace: "ws"})
			if tc.want == "" {
				if !errors.Is(err, mission.ErrInvalidInput) {
					t.Fatalf("created without any model: %+v, %v", m, err)
				}
				for _, hint := range []string{"--model", "aos settings set --default-model", "aos models", "script:NAME", "AOS_LOCAL_BASE_URL"} {
					if !strings.Contains(err.Error(), hint) {
						t.Errorf("error %q does not say %q", err, hint)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Model != tc.want {
				t.Fatalf("model %q, want %q", m.Model, tc.want)
			}
		})
	}
}

// TestErrorsNameTheWorkspaceRoot: a project or workspace outside the root,
// missing under it, or a root that does not exist: each error names the
// root, so that the owner knows where to put the repository.
func TestErrorsNameTheWorkspaceRoot(t *testing.T) {
	root := t.TempDir()
	gone := filepath.Join(t.TempDir(), "not-made-yet")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		root string
		req  mission.CreateProjectRequest
		want []string
	}{
		{"existing repository missing", root, mission.CreateProjectRequest{Name: "app", Path: "repos/app", Mode: mission.ProjectExisting},
			[]string{"repos/app", root, "init"}},
		{"outside the root", root, mission.CreateProjectRequest{Name: "app", Path: "/etc", Mode: mission.ProjectExisting},
			[]string{"inside the workspace root " + root}},
		{"not a repository", root, mission.CreateProjectRequest{Name: "app", Path: ".", Mode: mission.ProjectExisting},
			[]string{root}},
		{"the root does not exist", gone, mission.CreateProjectRequest{Name: "app", Path: "repos/app", Mode: mission.ProjectExisting},
			[]string{"the workspace root " + gone + " does not exist", "aos up creates it"}},
		{"the root does not exist (init)", gone, mission.CreateProjectRequest{Name: "app", Path: "app", Mode: mission.ProjectInit},
			[]string{gone}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			svc := mission.New(kernel.New(storetest.New(t, "sqlite").Store, kernel.Options{}), mission.Options{WorkspaceRoot: tc.root})
			_, err := svc.CreateProject(ctx, "test", tc.req)
			if !errors.Is(err, mission.ErrInvalidInput) {
				t.Fatalf("err = %v, want invalid input", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
			_, err = svc.CreateMission(ctx, "test", mission.CreateRequest{Objective: "x", Workspace: "nope", Model: "m"})
			if err == nil || !strings.Contains(err.Error(), tc.root) {
				t.Errorf("mission in a missing workspace: %v does not name the root", err)
			}
		})
	}
}
