package engine

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// ensureBranch puts the workspace on branch, creating it from HEAD if it
// does not exist. It is idempotent. A workspace that is not a git
// repository is left alone.
func ensureBranch(ctx context.Context, dir, branch string) (map[string]any, error) {
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(cmd.Environ(), "GIT_TERMINAL_PROMPT=0")
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := git("rev-parse", "--is-inside-work-tree"); err != nil || out != "true" {
		return map[string]any{"git": false}, nil
	}
	cur, _ := git("symbolic-ref", "--quiet", "--short", "HEAD")
	if cur == branch {
		return map[string]any{"git": true, "branch": branch, "created": false}, nil
	}
	if _, err := git("rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err == nil {
		if out, err := git("checkout", branch); err != nil {
			return nil, fmt.Errorf("engine: checkout %s: %s", branch, out)
		}
		return map[string]any{"git": true, "branch": branch, "created": false}, nil
	}
	if out, err := git("checkout", "-b", branch); err != nil {
		return nil, fmt.Errorf("engine: create branch %s: %s", branch, out)
	}
	return map[string]any{"git": true, "branch": branch, "created": true}, nil
}
