package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/kernel"
)

// A mission works in its own git worktree (docs/ENGINE.md, "Worktrees"):
// <WorktreeRoot>/<mission id>, on branch aos/<id8>, checked out at the
// base commit recorded when the mission was created. The owner's checkout
// (HEAD, index, files, current branch) is never touched. Creating and
// removing the worktree are journaled non-idempotent steps whose
// reconcilers look at git's own registration, and whose executions are
// idempotent, so a crash at any point leaves one worktree or none.

// Branch is the branch a mission's work is committed to: aos/ and the
// first 8 characters of its id.
func Branch(missionID string) string {
	if len(missionID) > 8 {
		missionID = missionID[:8]
	}
	return "aos/" + missionID
}

// DefaultWorktreeRoot is where missions' worktrees live when Deps names no
// root: aos-worktrees beside the data dir, never inside it (the sandbox
// hides the data dir from every command, and the worktree is the
// command's workspace).
func DefaultWorktreeRoot(dataDir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(dataDir)), "aos-worktrees")
}

// WorktreePath is the worktree of mission id under root.
func WorktreePath(root, missionID string) string { return filepath.Join(root, missionID) }

// PrepareBase records in in the commit a new mission starts from: the
// project's HEAD, or with in.IncludeUncommitted a snapshot commit of the
// work tree's tracked and untracked changes on top of HEAD (made through a
// temporary index: the owner's index is not touched). The workspace must
// be a project (gitx.Open).
func PrepareBase(ctx context.Context, in *Input) error {
	repo, err := gitx.Open(ctx, in.Workspace)
	if err != nil {
		return fmt.Errorf("engine: base of the mission: %w", err)
	}
	in.Base, in.Snapshot = "", ""
	if !in.IncludeUncommitted {
		in.Base, err = repo.Head(ctx)
		if err != nil {
			return fmt.Errorf("engine: base of the mission: %w", err)
		}
		return nil
	}
	c, dirty, err := repo.Snapshot(ctx, os.TempDir())
	if err != nil {
		return fmt.Errorf("engine: snapshot the uncommitted changes: %w", err)
	}
	in.Base = c
	if dirty {
		in.Snapshot = c
	}
	return nil
}

// lockWorktrees serialises aos's worktree operations on one project
// across processes: git's worktree add, list, remove and prune are not
// safe to run at once on one repository (a listing reads the half-written
// registration of a worktree being added). The lock is a file under the
// worktree root (aos's own), never in the owner's .git.
func lockWorktrees(root, project string) (unlock func(), err error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("engine: make the worktree root: %w", err)
	}
	sum := sha256.Sum256([]byte(project))
	f, err := os.OpenFile(filepath.Join(root, ".lock-"+hex.EncodeToString(sum[:8])), os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("engine: open the worktree lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("engine: take the worktree lock: %w", err)
	}
	return func() { _ = f.Close() }, nil
}

// worktreeInfo is the worktree_add step's result.
type worktreeInfo struct {
	Path   string `json:"path"`
	Branch string `json:"branch"`
	Base   string `json:"base"`
}

func (d Deps) worktreeRoot() string {
	if d.WorktreeRoot != "" {
		return d.WorktreeRoot
	}
	return DefaultWorktreeRoot(d.DataDir)
}

// addWorktree journals the creation of the mission's worktree.
func (l *loop) addWorktree() (worktreeInfo, error) {
	var info worktreeInfo
	project, branch := l.in.Workspace, l.branch()
	root := l.d.worktreeRoot()
	// The sandbox wants the workspace as a real path (no symlinks).
	if err := os.MkdirAll(root, 0o755); err != nil {
		return info, fmt.Errorf("engine: make the worktree root: %w", err)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	path := WorktreePath(root, l.rc.MissionID())
	spec := kernel.StepSpec{Kind: "setup", Name: "worktree_add", Effect: kernel.EffectNonIdempotent,
		Request: map[string]string{"project": project, "branch": branch, "base": l.in.Base},
		Reconcile: func(ctx context.Context, _ json.RawMessage, _ string) (kernel.ReconcileOutcome, error) {
			unlock, err := lockWorktrees(filepath.Dir(path), project)
			if err != nil {
				return kernel.ReconcileOutcome{}, err
			}
			defer unlock()
			repo, err := gitx.Open(ctx, project)
			if err != nil {
				return kernel.ReconcileOutcome{}, err
			}
			w, ok, err := probeWorktree(ctx, repo, path, branch)
			if err != nil || !ok {
				return kernel.ReconcileOutcome{Answer: kernel.ReconcileNotDone}, err
			}
			return kernel.ReconcileOutcome{Answer: kernel.ReconcileDone, Result: infoOf(w, path, branch, l.in.Base)}, nil
		}}
	res, err := l.rc.Step(spec, func(ctx context.Context, _ string) (kernel.Outcome, error) {
		i, err := ensureWorktree(ctx, project, path, branch, l.in.Base)
		return kernel.Outcome{Result: i}, err
	})
	if err != nil {
		return info, err
	}
	if err := json.Unmarshal(res, &info); err != nil {
		return info, fmt.Errorf("engine: decode worktree: %w", err)
	}
	return info, nil
}

func infoOf(w gitx.Worktree, path, branch, base string) worktreeInfo {
	if base == "" {
		base = w.Head
	}
	return worktreeInfo{Path: path, Branch: branch, Base: base}
}

// probeWorktree reports whether the worktree at path is complete: git
// registers it, on branch, not locked (git add holds an "initializing"
// lock until the checkout is done), and it is a linked worktree of repo.
func probeWorktree(ctx context.Context, repo *gitx.Repo, path, branch string) (gitx.Worktree, bool, error) {
	w, found, err := repo.FindWorktree(ctx, path)
	if err != nil || !found || w.Locked || w.Branch != "refs/heads/"+branch {
		return w, false, err
	}
	if _, _, err := gitx.CheckLinkedWorktree(ctx, path); err != nil {
		return w, false, nil
	}
	return w, true, nil
}

// ensureWorktree makes the worktree at path on branch, at base (HEAD when
// empty). It is idempotent: a complete worktree is kept; a partial one (a
// crash during git worktree add) is removed and made again.
func ensureWorktree(ctx context.Context, project, path, branch, base string) (worktreeInfo, error) {
	unlock, err := lockWorktrees(filepath.Dir(path), project)
	if err != nil {
		return worktreeInfo{}, err
	}
	defer unlock()
	repo, err := gitx.Open(ctx, project)
	if err != nil {
		return worktreeInfo{}, fmt.Errorf("engine: workspace: %w", err)
	}
	if w, ok, err := probeWorktree(ctx, repo, path, branch); err != nil {
		return worktreeInfo{}, err
	} else if ok {
		return infoOf(w, path, branch, base), nil
	}
	if base == "" {
		if base, err = repo.Head(ctx); err != nil {
			return worktreeInfo{}, fmt.Errorf("engine: workspace: %w", err)
		}
	}
	if err := repo.RemoveWorktree(ctx, path); err != nil {
		return worktreeInfo{}, fmt.Errorf("engine: clear a partial worktree: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return worktreeInfo{}, fmt.Errorf("engine: make the worktree root: %w", err)
	}
	if err := repo.AddWorktree(ctx, path, branch, base); err != nil {
		return worktreeInfo{}, fmt.Errorf("engine: %w", err)
	}
	w, ok, err := probeWorktree(ctx, repo, path, branch)
	if err != nil || !ok {
		return worktreeInfo{}, fmt.Errorf("engine: the new worktree %s is not complete: %v", path, err)
	}
	return infoOf(w, path, branch, base), nil
}

// removeWorktree journals the removal of the mission's worktree when the
// mission ends. A failure to remove is recorded, not fatal: the sweeper
// (SweepWorktrees) tries again.
func (l *loop) removeWorktree() error {
	if l.wt == nil {
		return nil
	}
	project, path, branch := l.in.Workspace, l.wt.Path, l.wt.Branch
	spec := kernel.StepSpec{Kind: "setup", Name: "worktree_remove", Effect: kernel.EffectNonIdempotent,
		Request: map[string]string{"project": project, "branch": branch},
		Reconcile: func(ctx context.Context, _ json.RawMessage, _ string) (kernel.ReconcileOutcome, error) {
			unlock, err := lockWorktrees(filepath.Dir(path), project)
			if err != nil {
				return kernel.ReconcileOutcome{}, err
			}
			defer unlock()
			repo, err := gitx.Open(ctx, project)
			if err != nil {
				return kernel.ReconcileOutcome{}, err
			}
			_, found, err := repo.FindWorktree(ctx, path)
			if err != nil || found {
				return kernel.ReconcileOutcome{Answer: kernel.ReconcileNotDone}, err
			}
			if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
				return kernel.ReconcileOutcome{Answer: kernel.ReconcileNotDone}, nil
			}
			return kernel.ReconcileOutcome{Answer: kernel.ReconcileDone, Result: map[string]any{"removed": true}}, nil
		}}
	_, err := l.rc.Step(spec, func(ctx context.Context, _ string) (kernel.Outcome, error) {
		saved, err := RemoveWorktree(ctx, project, path, l.rc.MissionID())
		if err != nil {
			if ctx.Err() != nil {
				return kernel.Outcome{}, err
			}
			return kernel.Outcome{Result: map[string]any{"removed": false, "error": err.Error()}}, nil
		}
		return kernel.Outcome{Result: map[string]any{"removed": true, "savedCommit": saved}}, nil
	})
	return err
}

// RemoveWorktree removes a mission's worktree at path from project. Work
// left uncommitted there is first committed on the worktree's branch (so
// that nothing the mission made is lost; saved is that commit), then the
// worktree and its registration are removed; the branch stays. It is
// idempotent.
func RemoveWorktree(ctx context.Context, project, path, missionID string) (saved string, err error) {
	unlock, err := lockWorktrees(filepath.Dir(path), project)
	if err != nil {
		return "", err
	}
	defer unlock()
	repo, err := gitx.Open(ctx, project)
	if err != nil {
		return "", fmt.Errorf("engine: remove worktree: %w", err)
	}
	if _, found, err := repo.FindWorktree(ctx, path); err != nil {
		return "", err
	} else if found {
		if saved, err = saveLeftovers(ctx, path, missionID); err != nil {
			return "", err
		}
	}
	if err := repo.RemoveWorktree(ctx, path); err != nil {
		return saved, fmt.Errorf("engine: %w", err)
	}
	return saved, nil
}

// saveLeftovers commits what the mission left uncommitted in its worktree.
func saveLeftovers(ctx context.Context, path, missionID string) (string, error) {
	wt, err := gitx.OpenWorkspace(ctx, path)
	if err != nil {
		// Not a sound worktree (its .git was damaged): nothing git can save.
		return "", nil
	}
	run := func(stdin string, env []string, args ...string) (string, error) {
		r, err := wt.Run(ctx, gitx.Cmd{Args: args, Stdin: stdin, Env: env})
		if err != nil {
			return "", fmt.Errorf("engine: save uncommitted work: %w", err)
		}
		if r.Code != 0 {
			return "", fmt.Errorf("engine: save uncommitted work: git %s: %s", args[0], strings.TrimSpace(r.Combined))
		}
		return strings.TrimSpace(r.Stdout), nil
	}
	nested, err := wt.NestedRepos(ctx)
	if err != nil {
		return "", err
	}
	add := []string{"add", "-A", "--", ".", gitx.ExcludeTempFiles}
	for _, n := range nested {
		add = append(add, ":(exclude,literal)"+n)
	}
	if _, err := run("", nil, add...); err != nil {
		return "", err
	}
	if r, err := wt.Run(ctx, gitx.Cmd{Args: []string{"diff", "--cached", "--quiet", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all"}}); err != nil {
		return "", err
	} else if r.Code == 0 {
		return "", nil
	}
	ident, err := wt.IdentityEnv(ctx)
	if err != nil {
		return "", err
	}
	msg := "aos: work left uncommitted when the mission ended\n\nAos-Mission: " + missionID + "\n"
	if _, err := run(msg, ident, "commit", "--no-verify", "--no-gpg-sign", "-q", "-F", "-"); err != nil {
		return "", err
	}
	return run("", nil, "rev-parse", "HEAD")
}

// MissionLookup says whether a mission has ended and gives its input; ok
// is false for a mission this store does not know.
type MissionLookup func(ctx context.Context, missionID string) (ended bool, in Input, ok bool, err error)

// SweepWorktrees removes the worktrees under root whose mission has ended
// without removing them (cancelled while idle, failed, or crashed between
// its end and the removal step), and returns how many it removed.
// Directories of unknown missions are left alone.
func SweepWorktrees(ctx context.Context, root string, lookup MissionLookup) (int, error) {
	ents, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("engine: sweep worktrees: %w", err)
	}
	n := 0
	var errs []error
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		ended, in, ok, err := lookup(ctx, e.Name())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok || !ended {
			continue
		}
		if _, err := RemoveWorktree(ctx, in.Workspace, filepath.Join(root, e.Name()), e.Name()); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}
