package mission_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestCreateRecordsTheBase: a mission in a project records the project's
// HEAD as its base, or with includeUncommitted a snapshot commit of the
// owner's changes, and the mission says how to look at and merge its
// branch. includeUncommitted outside a project is refused.
func TestCreateRecordsTheBase(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "calc")
	if err := demo.WriteRepo(repo); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "plain"), 0o755); err != nil {
		t.Fatal(err)
	}
	head, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	svc := mission.New(kernel.New(storetest.New(t, "sqlite").Store, kernel.Options{}), mission.Options{WorkspaceRoot: root})
	ctx := context.Background()
	base := func(m mission.Mission) engine.Input {
		var in engine.Input
		if err := json.Unmarshal(m.Spec, &in); err != nil {
			t.Fatal(err)
		}
		return in
	}

	m, err := svc.CreateMission(ctx, "test", mission.CreateRequest{Objective: "x", Workspace: "calc", Model: "claude-opus-5-5"})
	if err != nil {
		t.Fatal(err)
	}
	if in := base(m); in.Base != strings.TrimSpace(string(head)) || in.Snapshot != "" {
		t.Errorf("base %q snapshot %q, want HEAD %s", in.Base, in.Snapshot, head)
	}
	br := engine.Branch(m.ID)
	if g := m.Git; g == nil || g.Branch != br || g.Merge != "git merge "+br || !strings.HasPrefix(g.Log, "git log "+strings.TrimSpace(string(head))+".."+br) {
		t.Errorf("git = %+v", m.Git)
	}

	if err := os.WriteFile(filepath.Join(repo, "notes.txt"), []byte("dirty\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err = svc.CreateMission(ctx, "test", mission.CreateRequest{Objective: "x", Workspace: "calc", Model: "claude-opus-5-5", IncludeUncommitted: true})
	if err != nil {
		t.Fatal(err)
	}
	if in := base(m); in.Snapshot == "" || in.Base != in.Snapshot || m.Git == nil || m.Git.Snapshot != in.Snapshot {
		t.Errorf("includeUncommitted: base %q snapshot %q git %+v", in.Base, in.Snapshot, m.Git)
	}

	if _, err := svc.CreateMission(ctx, "test", mission.CreateRequest{Objective: "x", Workspace: "plain", Model: "claude-opus-5-5", IncludeUncommitted: true}); !errors.Is(err, mission.ErrInvalidInput) {
		t.Errorf("includeUncommitted outside a project: %v, want invalid input", err)
	}
	if m, err := svc.CreateMission(ctx, "test", mission.CreateRequest{Objective: "x", Workspace: "plain", Model: "claude-opus-5-5"}); err != nil || m.Git != nil {
		t.Errorf("a plain directory: %v, git %+v (want no base, as before)", err, m.Git)
	}
}
