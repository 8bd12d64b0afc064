package tool

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/gitx"
)

// Commit trailers git_commit adds.
const (
	TrailerMission = "Aos-Mission"
	TrailerRun     = "Aos-Run"
	TrailerStep    = "Aos-Step"
)

type gitCommitInput struct {
	Message string    `json:"message"`
	Paths   *[]string `json:"paths"`
}

func (in gitCommitInput) validate() error {
	if strings.TrimSpace(in.Message) == "" {
		return errors.New("message is required")
	}
	if in.Paths != nil {
		for _, p := range *in.Paths {
			if p == "" || strings.ContainsRune(p, 0) {
				return fmt.Errorf("invalid path %q", p)
			}
		}
	}
	return nil
}

// GitCommit returns the git_commit tool: it stages the given paths (or
// everything), and commits with mission trailers. Nothing to commit is a
// successful no-op. Reconcile finds a commit carrying this call's IdemKey.
func GitCommit() Tool {
	return reconcilable[gitCommitInput]{
		def: &def[gitCommitInput]{
			name:        "git_commit",
			description: "Stage the given paths (or all changes when paths is null) and commit them with the message. Nothing to commit is not an error. Repositories nested inside the workspace are never staged.",
			schema: mustJSON(object(
				str("message", "The commit message."),
				array("paths", "Paths to stage, relative to the workspace; null stages all changes.", stringItems, true),
			)),
			effect: always[gitCommitInput](EffectIdempotentWrite),
			risk:   riskAlways[gitCommitInput](RiskWorkspaceWrite),
			run:    runGitCommit,
			approval: func(in gitCommitInput) Approval {
				d := "all changes"
				if in.Paths != nil {
					d = strings.Join(*in.Paths, ", ")
				}
				return Approval{Title: "Commit: " + firstLine(in.Message), Detail: d}
			},
		},
		reconcile: reconcileGitCommit,
	}
}

func runGitCommit(ctx context.Context, tc *Context, in gitCommitInput) (Result, error) {
	repo, refused, err := openRepo(ctx, tc)
	if err != nil || refused != nil {
		return deref(refused, Result{}), err
	}
	// Pathspecs are literal: a model's path is never pathspec magic.
	add := []string{"add", "-A", "--"}
	if in.Paths == nil {
		add = append(add, ".")
	} else {
		for _, p := range *in.Paths {
			r, err := ResolvePath(tc.Workspace, p)
			if err != nil {
				return fail("%v", err), nil
			}
			if strings.EqualFold(strings.Split(r.Rel, "/")[0], ".git") {
				return fail("path %q: cannot stage .git internals", p), nil
			}
			add = append(add, ":(literal)"+r.Rel)
		}
	}
	// A repository inside the project (untracked, or a gitlink) is never
	// staged: git would record it as a gitlink, or run git status inside
	// it under its own config, which is the model's to write.
	nested, err := repo.NestedRepos(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("tool: git_commit: %w", err)
	}
	for _, n := range nested {
		add = append(add, ":(exclude,literal)"+n)
	}
	add = append(add, gitx.ExcludeTempFiles)
	note := ""
	if len(nested) > 0 {
		note = "\nnot staged (aos never stages repositories or submodules inside the project): " + strings.Join(nested, ", ")
	}
	if r, err := runGit(ctx, repo, "", nil, add...); err != nil || r.code != 0 {
		if err != nil {
			return Result{}, err
		}
		return gitResultFor(r, ""), nil
	}
	r, err := runGit(ctx, repo, "", nil, "diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all")
	if err != nil {
		return Result{}, err
	}
	if r.code == 0 {
		return Result{OK: true, Output: "nothing to commit: the working tree has no staged changes" + note}, nil
	}
	ident, err := repo.IdentityEnv(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("tool: git_commit: %w", err)
	}
	msg := strings.TrimSpace(in.Message) + "\n\n" + trailers(tc)
	r, err = runGit(ctx, repo, msg, ident, "commit", "--no-verify", "--no-gpg-sign", "-F", "-")
	if err != nil {
		return Result{}, err
	}
	if r.code != 0 {
		return gitResultFor(r, ""), nil
	}
	head, err := runGit(ctx, repo, "", nil, "log", "-1", "--no-show-signature", "--format=%H %s")
	if err != nil {
		return Result{}, err
	}
	return Result{OK: true, Output: "committed " + strings.TrimSpace(head.out) + note}, nil
}

func trailers(tc *Context) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n", TrailerMission, tc.MissionID)
	fmt.Fprintf(&b, "%s: %s\n", TrailerRun, tc.RunID)
	if tc.IdemKey != "" {
		fmt.Fprintf(&b, "%s: %s\n", TrailerStep, tc.IdemKey)
	}
	return b.String()
}

func reconcileGitCommit(ctx context.Context, tc *Context, _ gitCommitInput) (Reconciliation, error) {
	if tc.IdemKey == "" {
		return Reconciliation{State: ReconcileUnknown}, nil
	}
	repo, refused, err := openRepo(ctx, tc)
	if err != nil || refused != nil {
		return Reconciliation{State: ReconcileUnknown}, err
	}
	r, err := runGit(ctx, repo, "", nil, "log", "-20", "--no-show-signature", "--format=%H%x09%(trailers:key="+TrailerStep+",valueonly,separator=%x20)")
	if err != nil || r.code != 0 {
		return Reconciliation{State: ReconcileUnknown}, err
	}
	for _, line := range strings.Split(r.out, "\n") {
		sha, key, _ := strings.Cut(line, "\t")
		if strings.TrimSpace(key) == tc.IdemKey {
			return Reconciliation{State: ReconcileDone, Output: "committed " + sha}, nil
		}
	}
	return Reconciliation{State: ReconcileNotDone}, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
