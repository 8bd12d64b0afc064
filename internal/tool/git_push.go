package tool

import (
	"context"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/sandbox"
)

type gitPushInput struct {
	Remote *string `json:"remote"`
	Branch *string `json:"branch"`
}

func (in gitPushInput) validate() error {
	if in.Remote != nil {
		if err := validRef("remote", *in.Remote); err != nil {
			return err
		}
	}
	if in.Branch != nil {
		if err := validRef("branch", *in.Branch); err != nil {
			return err
		}
	}
	return nil
}

// GitPush returns the git_push tool: it pushes HEAD to a branch of a
// remote. It is external and non-idempotent; Reconcile compares the
// remote ref with the local HEAD.
func GitPush() Tool {
	return reconcilable[gitPushInput]{
		def: &def[gitPushInput]{
			name:        "git_push",
			description: "Push the current HEAD to a branch on a remote (default origin, and the current branch's name).",
			schema: mustJSON(object(
				optStr("remote", "Remote name, or null for origin."),
				optStr("branch", "Remote branch name, or null for the current branch."),
			)),
			effect: always[gitPushInput](EffectNonIdempotent),
			risk:   func(gitPushInput, sandbox.Network) Risk { return RiskExternal },
			run:    runGitPush,
			approval: func(in gitPushInput) Approval {
				return Approval{Title: "Push to " + deref(in.Remote, "origin"), Detail: "branch " + deref(in.Branch, "(current)")}
			},
		},
		reconcile: reconcileGitPush,
	}
}

// pushTarget resolves the remote, branch and local HEAD sha.
func pushTarget(ctx context.Context, tc *Context, in gitPushInput) (remote, branch, head string, res *Result, err error) {
	remote = deref(in.Remote, "origin")
	if in.Branch != nil {
		branch = *in.Branch
	} else {
		r, err := runGit(ctx, tc.Workspace, "", nil, "symbolic-ref", "--short", "HEAD")
		if err != nil {
			return "", "", "", nil, err
		}
		if r.code != 0 {
			f := fail("HEAD is detached: name the branch to push")
			return "", "", "", &f, nil
		}
		branch = strings.TrimSpace(r.out)
	}
	r, err := runGit(ctx, tc.Workspace, "", nil, "rev-parse", "HEAD")
	if err != nil {
		return "", "", "", nil, err
	}
	if r.code != 0 {
		f := fail("no commit to push:\n%s", r.out)
		return "", "", "", &f, nil
	}
	return remote, branch, strings.TrimSpace(r.out), nil, nil
}

func runGitPush(ctx context.Context, tc *Context, in gitPushInput) (Result, error) {
	remote, branch, head, res, err := pushTarget(ctx, tc, in)
	if err != nil || res != nil {
		return deref(res, Result{}), err
	}
	r, err := runGit(ctx, tc.Workspace, "", nil, "push", "--porcelain", "--no-verify", remote, "HEAD:refs/heads/"+branch)
	if err != nil {
		return Result{}, err
	}
	if r.code != 0 {
		return gitResultFor(r, ""), nil
	}
	return Result{OK: true, Output: fmt.Sprintf("pushed %s to %s %s\n%s", head, remote, branch, r.out), Trust: TrustUntrusted}, nil
}

func reconcileGitPush(ctx context.Context, tc *Context, in gitPushInput) (Reconciliation, error) {
	remote, branch, head, res, err := pushTarget(ctx, tc, in)
	if err != nil || res != nil {
		return Reconciliation{State: ReconcileUnknown}, err
	}
	r, err := runGit(ctx, tc.Workspace, "", nil, "ls-remote", "--heads", remote, "refs/heads/"+branch)
	if err != nil || r.code != 0 {
		return Reconciliation{State: ReconcileUnknown}, err
	}
	remoteSHA, _, _ := strings.Cut(strings.TrimSpace(r.out), "\t")
	if remoteSHA == head {
		return Reconciliation{State: ReconcileDone, Output: fmt.Sprintf("pushed %s to %s %s", head, remote, branch)}, nil
	}
	return Reconciliation{State: ReconcileNotDone}, nil
}
