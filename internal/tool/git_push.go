package tool

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/gitx"
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
			description: "Push the current HEAD to a branch on a configured remote (default origin, and the current branch's name). Only https and ssh remotes are allowed.",
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

// pushTarget is where a push goes.
type pushTarget struct {
	repo                 *gitx.Repo
	remote, branch, head string
}

// resolvePush opens the repository, checks that the remote is configured
// and pushes only over https or ssh, and resolves the branch and local HEAD.
// A refusal is a result for the model.
func resolvePush(ctx context.Context, tc *Context, in gitPushInput) (pushTarget, *Result, error) {
	repo, refused, err := openRepo(ctx, tc)
	if err != nil || refused != nil {
		return pushTarget{}, refused, err
	}
	pt := pushTarget{repo: repo, remote: deref(in.Remote, "origin")}
	if _, err := repo.PushURLs(ctx, pt.remote); err != nil {
		var ge *gitx.Error
		if errors.As(err, &ge) {
			f := fail("%s", ge.Msg)
			return pushTarget{}, &f, nil
		}
		return pushTarget{}, nil, fmt.Errorf("tool: git_push: %w", err)
	}
	if in.Branch != nil {
		pt.branch = *in.Branch
	} else {
		r, err := runGit(ctx, repo, "", nil, "symbolic-ref", "--short", "HEAD")
		if err != nil {
			return pushTarget{}, nil, err
		}
		if r.code != 0 {
			f := fail("HEAD is detached: name the branch to push")
			return pushTarget{}, &f, nil
		}
		pt.branch = strings.TrimSpace(r.out)
	}
	r, err := runGit(ctx, repo, "", nil, "rev-parse", "HEAD")
	if err != nil {
		return pushTarget{}, nil, err
	}
	if r.code != 0 {
		f := fail("no commit to push:\n%s", r.out)
		return pushTarget{}, &f, nil
	}
	pt.head = strings.TrimSpace(r.out)
	return pt, nil, nil
}

func runGitPush(ctx context.Context, tc *Context, in gitPushInput) (Result, error) {
	pt, res, err := resolvePush(ctx, tc, in)
	if err != nil || res != nil {
		return deref(res, Result{}), err
	}
	r, err := runGit(ctx, pt.repo, "", nil, "push", "--porcelain", "--no-verify", "--no-recurse-submodules", "--", pt.remote, "HEAD:refs/heads/"+pt.branch)
	if err != nil {
		return Result{}, err
	}
	if r.code != 0 {
		return gitResultFor(r, ""), nil
	}
	return Result{OK: true, Output: fmt.Sprintf("pushed %s to %s %s\n%s", pt.head, pt.remote, pt.branch, r.out), Trust: TrustUntrusted}, nil
}

func reconcileGitPush(ctx context.Context, tc *Context, in gitPushInput) (Reconciliation, error) {
	pt, res, err := resolvePush(ctx, tc, in)
	if err != nil || res != nil {
		return Reconciliation{State: ReconcileUnknown}, err
	}
	r, err := runGit(ctx, pt.repo, "", nil, "ls-remote", "--heads", "--", pt.remote, "refs/heads/"+pt.branch)
	if err != nil || r.code != 0 {
		return Reconciliation{State: ReconcileUnknown}, err
	}
	remoteSHA, _, _ := strings.Cut(strings.TrimSpace(r.out), "\t")
	if remoteSHA == pt.head {
		return Reconciliation{State: ReconcileDone, Output: fmt.Sprintf("pushed %s to %s %s", pt.head, pt.remote, pt.branch)}, nil
	}
	return Reconciliation{State: ReconcileNotDone}, nil
}
