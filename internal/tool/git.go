package tool

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/aos-run/aos/internal/gitx"
)

// gitResult is one git invocation's outcome.
type gitResult struct {
	out  string // combined stdout and stderr
	code int
}

// openRepo opens the workspace as a project repository through gitx, the
// one hardened runner of host git. A refusal (not the top level of a
// repository, config that names a program) is a result the model reads;
// the returned error is for git that could not run.
func openRepo(ctx context.Context, tc *Context) (*gitx.Repo, *Result, error) {
	repo, err := gitx.OpenWorkspace(ctx, tc.Workspace)
	var ge *gitx.Error
	if errors.As(err, &ge) {
		f := fail("%s", ge.Msg)
		return nil, &f, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("tool: open repository: %w", err)
	}
	return repo, nil, nil
}

// runGit runs git in repo through gitx. A non-zero exit is a gitResult,
// not an error; errors are for git that could not run.
func runGit(ctx context.Context, repo *gitx.Repo, stdin string, env []string, args ...string) (gitResult, error) {
	r, err := repo.Run(ctx, gitx.Cmd{Args: args, Stdin: stdin, Env: env})
	if err != nil {
		return gitResult{}, fmt.Errorf("tool: git %s: %w", args[0], err)
	}
	return gitResult{out: r.Combined, code: r.Code}, nil
}

// gitResultFor turns a git result into a model-visible Result.
func gitResultFor(r gitResult, okText string) Result {
	if r.code != 0 {
		return fail("git failed (exit %d):\n%s", r.code, r.out)
	}
	if strings.TrimSpace(r.out) == "" {
		return Result{OK: true, Output: okText}
	}
	return Result{OK: true, Output: r.out, Trust: TrustUntrusted}
}

// refName matches remote and branch names git_push accepts.
var refName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)

func validRef(kind, s string) error {
	if !refName.MatchString(s) || strings.Contains(s, "..") || strings.HasSuffix(s, ".lock") {
		return fmt.Errorf("%s %q is not a plain name", kind, s)
	}
	return nil
}
