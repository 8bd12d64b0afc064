package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/gitx"
)

// ensureBranch puts the workspace on branch, creating it from HEAD if it
// does not exist. It is idempotent. The workspace must be a project: the
// top level of a git work tree with a real .git directory whose config
// names no program (gitx.Open); anything else fails the setup with
// gitx's typed error, before any tool runs.
func ensureBranch(ctx context.Context, dir, branch string) (map[string]any, error) {
	repo, err := gitx.Open(ctx, dir)
	if err != nil {
		return nil, fmt.Errorf("engine: workspace: %w", err)
	}
	git := func(args ...string) (string, bool, error) {
		r, err := repo.Run(ctx, gitx.Cmd{Args: args})
		if err != nil {
			return "", false, fmt.Errorf("engine: git %s: %w", args[0], err)
		}
		return strings.TrimSpace(r.Combined), r.Code == 0, nil
	}
	cur, _, err := git("symbolic-ref", "--quiet", "--short", "HEAD")
	if err != nil {
		return nil, err
	}
	if cur == branch {
		return map[string]any{"git": true, "branch": branch, "created": false}, nil
	}
	_, exists, err := git("rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	if err != nil {
		return nil, err
	}
	if exists {
		if out, ok, err := git("checkout", "--no-recurse-submodules", branch, "--"); err != nil || !ok {
			return nil, checkoutErr(fmt.Sprintf("checkout %s", branch), out, err)
		}
		return map[string]any{"git": true, "branch": branch, "created": false}, nil
	}
	if out, ok, err := git("checkout", "--no-recurse-submodules", "-b", branch); err != nil || !ok {
		return nil, checkoutErr(fmt.Sprintf("create branch %s", branch), out, err)
	}
	return map[string]any{"git": true, "branch": branch, "created": true}, nil
}

func checkoutErr(doing, out string, err error) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("engine: %s: %s", doing, out)
}
