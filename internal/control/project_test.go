package control_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aos-run/aos/internal/control"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
)

// TestProjectOperations: project.start, project.status, blocker.list,
// project.stop and project.resume map onto the mission service: create a
// mission of the project, show it live, cancel it, retry it.
func TestProjectOperations(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	p, err := f.svc.CreateProject(ctx, "test", mission.CreateProjectRequest{Name: "demo", Path: "demo", Mode: mission.ProjectInit})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.client.Call(ctx, control.OpProjectStart, "start-1", mission.CreateRequest{Objective: "x", Model: "claude-opus-5-5"}, nil); !errors.Is(err, &control.Error{Code: control.CodeInvalidArgument}) {
		t.Fatalf("project.start without a project: %v", err)
	}
	var m mission.Mission
	if err := f.client.Call(ctx, control.OpProjectStart, "start-2", mission.CreateRequest{Objective: "x", Model: "claude-opus-5-5", ProjectID: p.ID}, &m); err != nil || m.ProjectID != p.ID {
		t.Fatalf("project.start: %+v %v", m, err)
	}
	var st control.ProjectStatus
	if err := f.client.Call(ctx, control.OpProjectStatus, "", control.ProjectArgs{ProjectID: p.ID}, &st); err != nil || len(st.Live) != 1 || st.Live[0].ID != m.ID {
		t.Fatalf("project.status: %+v %v", st, err)
	}
	var ws []mission.Wait
	if err := f.client.Call(ctx, control.OpBlockerList, "", control.BlockerListArgs{}, &ws); err != nil || len(ws) != 0 {
		t.Fatalf("blocker.list: %+v %v", ws, err)
	}
	if err := f.client.Call(ctx, control.OpProjectResume, "resume-1", control.ProjectResumeArgs{ProjectID: p.ID}, nil); !errors.Is(err, &control.Error{Code: control.CodeInvalidState}) {
		t.Fatalf("project.resume with nothing ended: %v", err)
	}
	var stopped []mission.Mission
	if err := f.client.Call(ctx, control.OpProjectStop, "stop-1", control.ProjectArgs{ProjectID: p.ID}, &stopped); err != nil || len(stopped) != 1 {
		t.Fatalf("project.stop: %+v %v", stopped, err)
	}
	// No worker runs here: cancel a queued mission ends it at once.
	got, err := f.svc.GetMission(ctx, m.ID)
	if err != nil || got.Status != kernel.StatusCancelled {
		t.Fatalf("after project.stop: %s %v", got.Status, err)
	}
	var again mission.Mission
	if err := f.client.Call(ctx, control.OpProjectResume, "resume-2", control.ProjectResumeArgs{ProjectID: p.ID}, &again); err != nil || again.ID == m.ID || again.ProjectID != p.ID {
		t.Fatalf("project.resume: %+v %v", again, err)
	}
	if err := f.client.Call(ctx, control.OpProjectStatus, "", control.ProjectArgs{ProjectID: "prj_nope"}, nil); !errors.Is(err, &control.Error{Code: control.CodeNotFound}) {
		t.Fatalf("project.status of nothing: %v", err)
	}
}
