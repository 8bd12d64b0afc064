package mission

import (
	"context"

	"github.com/aos-run/aos/internal/gitx"
)

// workspace returns the directory a mission works in.
//
// A mission from the API works inside the workspace root: in the directory
// of its project (req.ProjectID, which must exist) or in req.Workspace,
// confined to the root with its symbolic links resolved (confine).
//
// A local mission (req.Local: `aos run --project DIR`, aos demo) is the
// owner at their own machine naming their own directory, so DIR may lie
// anywhere, outside the workspace root too; otherwise it is validated as
// strictly: no control characters, symbolic links resolved, and it must be
// the top level of a git repository with a real .git directory
// (gitx.CheckProject), since the mission's worktree and branch come from
// it. A local mission takes no project id.
func (s *Service) workspace(ctx context.Context, req *CreateRequest) (string, error) {
	if req.Local {
		if req.ProjectID != "" {
			return "", invalid("a local mission takes a project directory, not a project id")
		}
		if req.Workspace == "" || hasControl(req.Workspace) {
			return "", invalid("the project must be a directory path without control characters")
		}
		dir, err := gitx.CheckProject(ctx, req.Workspace)
		if err != nil {
			return "", invalid("%s", gitMsg(err))
		}
		return dir, nil
	}
	if req.ProjectID != "" {
		// The project must exist; without a workspace the mission works in
		// its directory.
		dir, err := s.projectDir(ctx, req.ProjectID)
		if err != nil {
			return "", err
		}
		if req.Workspace == "" {
			req.Workspace = dir
		}
	}
	return s.confine(req.Workspace)
}
