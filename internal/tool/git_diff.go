package tool

import (
	"context"
	"errors"
)

type gitDiffInput struct {
	Path   *string `json:"path"`
	Staged *bool   `json:"staged"`
}

func (in gitDiffInput) validate() error {
	if in.Path != nil && *in.Path == "" {
		return errors.New("path must be null or non-empty")
	}
	return nil
}

// GitDiff returns the git_diff tool: unstaged (or staged) changes,
// optionally for one path.
func GitDiff() Tool {
	return &def[gitDiffInput]{
		name:        "git_diff",
		description: "Show the git diff of the workspace: unstaged changes, or staged ones with staged=true; optionally for one path.",
		schema: mustJSON(object(
			optStr("path", "Limit to this path (relative to the workspace), or null."),
			optBool("staged", "Show staged changes instead of unstaged ones (default false)."),
		)),
		effect:       always[gitDiffInput](EffectRead),
		risk:         riskAlways[gitDiffInput](RiskRead),
		parallelSafe: true,
		run:          runGitDiff,
		approval:     func(gitDiffInput) Approval { return Approval{Title: "git diff"} },
	}
}

func runGitDiff(ctx context.Context, tc *Context, in gitDiffInput) (Result, error) {
	repo, refused, err := openRepo(ctx, tc)
	if err != nil || refused != nil {
		return deref(refused, Result{}), err
	}
	args := []string{"diff", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all"}
	if deref(in.Staged, false) {
		args = append(args, "--cached")
	}
	if in.Path != nil {
		r, err := ResolvePath(tc.Workspace, *in.Path)
		if err != nil {
			return fail("%v", err), nil
		}
		args = append(args, "--", ":(literal)"+r.Rel)
	}
	r, err := runGit(ctx, repo, "", nil, args...)
	if err != nil {
		return Result{}, err
	}
	res := gitResultFor(r, "no changes")
	if res.OK && r.out != "" {
		res.Diff = r.out
	}
	return res, nil
}
