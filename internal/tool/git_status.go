package tool

import "context"

type gitStatusInput struct{}

func (gitStatusInput) validate() error { return nil }

// GitStatus returns the git_status tool (porcelain status with branch).
func GitStatus() Tool {
	return &def[gitStatusInput]{
		name:         "git_status",
		description:  "Show the git status of the workspace: branch, staged, unstaged and untracked files. A nested repository shows as one untracked directory; aos never looks inside it.",
		schema:       mustJSON(object()),
		effect:       always[gitStatusInput](EffectRead),
		risk:         riskAlways[gitStatusInput](RiskRead),
		parallelSafe: true,
		run: func(ctx context.Context, tc *Context, _ gitStatusInput) (Result, error) {
			repo, refused, err := openRepo(ctx, tc)
			if err != nil || refused != nil {
				return deref(refused, Result{}), err
			}
			r, err := runGit(ctx, repo, "", nil, "status", "--porcelain=v1", "--branch", "--untracked-files=all", "--ignore-submodules=all")
			if err != nil {
				return Result{}, err
			}
			return gitResultFor(r, "clean"), nil
		},
		approval: func(gitStatusInput) Approval { return Approval{Title: "git status"} },
	}
}
