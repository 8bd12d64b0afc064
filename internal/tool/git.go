package tool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

// gitTimeout bounds one git invocation.
const gitTimeout = 2 * time.Minute

// gitHardening is passed to every git call: the workspace is writable by
// sandboxed commands, so git must not run hooks, an fsmonitor or the ext
// transport that a command could have configured.
var gitHardening = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "protocol.ext.allow=never",
	"-c", "core.pager=cat",
	"--no-pager",
}

// gitResult is one git invocation's outcome.
type gitResult struct {
	out  string // combined stdout and stderr
	code int
}

// runGit runs the real git in dir. A non-zero exit is a gitResult, not an
// error; errors are for git that could not run.
func runGit(ctx context.Context, dir string, stdin string, env []string, args ...string) (gitResult, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, gitHardening...), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	cmd.Env = append(cmd.Env, env...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return gitResult{out: out.String(), code: ee.ExitCode()}, nil
	}
	if err != nil {
		return gitResult{}, fmt.Errorf("tool: run git %s: %w", args[0], err)
	}
	return gitResult{out: out.String()}, nil
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
