package gitx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// worktreeTimeout bounds the git runs that check out or remove a whole
// work tree.
const worktreeTimeout = 10 * time.Minute

// Worktree is one work tree of a repository, as `git worktree list`
// reports it.
type Worktree struct {
	Path string
	Head string
	// Branch is the full ref (refs/heads/…); empty when detached.
	Branch string
	// Locked is set while `git worktree add` is still checking out (its
	// "initializing" lock) or when someone locked it.
	Locked   bool
	Prunable bool
}

// OpenWorkspace opens a mission's workspace: a project (Open), or a linked
// worktree of a project that CheckLinkedWorktree accepts. Its config is
// audited as Open's is: git reads the main repository's config (and the
// worktree's own, if any) for a linked worktree.
func OpenWorkspace(ctx context.Context, dir string) (*Repo, error) {
	fi, err := os.Lstat(filepath.Join(dir, ".git"))
	if err != nil || !fi.Mode().IsRegular() {
		return Open(ctx, dir)
	}
	top, _, err := CheckLinkedWorktree(ctx, dir)
	if err != nil {
		return nil, err
	}
	return openChecked(ctx, top)
}

// CheckLinkedWorktree verifies that dir is the top level of a linked
// worktree of a project: its .git is a regular file naming
// <main>/.git/worktrees/<name>, <main> passes CheckProject, and that
// gitdir points back at dir/.git. It returns dir and <main>, symbolic
// links resolved. A .git file that names any other repository is refused,
// so a rewritten .git file cannot send host git elsewhere.
func CheckLinkedWorktree(ctx context.Context, dir string) (top, main string, err error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", "", &Error{Code: CodeNotProject, Msg: fmt.Sprintf("worktree %s cannot be resolved", dir), Err: err}
	}
	notWT := func(why string) (string, string, error) {
		return "", "", refuse(CodeNotProject, "worktree %s: %s", abs, why)
	}
	body, err := readSmallRegular(filepath.Join(abs, ".git"))
	if err != nil {
		return notWT(".git is not a regular file: " + err.Error())
	}
	gitdir, ok := strings.CutPrefix(strings.TrimRight(body, "\n"), "gitdir: ")
	if !ok || !filepath.IsAbs(gitdir) || filepath.Clean(gitdir) != gitdir || strings.ContainsAny(gitdir, "\n\x00") {
		return notWT(".git does not name an absolute gitdir")
	}
	wts := filepath.Dir(gitdir)
	dotgit := filepath.Dir(wts)
	if filepath.Base(wts) != "worktrees" || filepath.Base(dotgit) != ".git" {
		return notWT(".git does not name a linked worktree of a project (<project>/.git/worktrees/<name>)")
	}
	main, err = CheckProject(ctx, filepath.Dir(dotgit))
	if err != nil {
		return "", "", err
	}
	if filepath.Join(main, ".git", "worktrees", filepath.Base(gitdir)) != gitdir {
		return notWT("its gitdir is not inside the project's own .git")
	}
	back, err := readSmallRegular(filepath.Join(gitdir, "gitdir"))
	if err != nil || strings.TrimRight(back, "\n") != filepath.Join(abs, ".git") {
		return notWT("the project does not register this directory as its worktree")
	}
	res, err := Run(ctx, Cmd{Dir: abs, Args: []string{"rev-parse", "--is-bare-repository", "--show-toplevel", "--absolute-git-dir", "--path-format=absolute", "--git-common-dir"},
		Env: []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(abs)}})
	if err != nil {
		return "", "", fmt.Errorf("gitx: inspect %s: %w", abs, err)
	}
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if res.Code != 0 || len(lines) != 4 || lines[0] != "false" || lines[1] != abs || lines[2] != gitdir || lines[3] != filepath.Join(main, ".git") {
		return notWT("git does not see it as a linked worktree of " + main + ": " + FirstLine(res.Combined))
	}
	return abs, main, nil
}

// readSmallRegular reads a regular file of at most 4 KiB, following no
// symbolic link at its last component.
func readSmallRegular(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return "", errors.New("not a small regular file")
	}
	b, err := os.ReadFile(path)
	return string(b), err
}

// Head returns the commit HEAD names; an error for a repository without
// commits.
func (r *Repo) Head(ctx context.Context) (string, error) {
	return r.RevParse(ctx, "HEAD")
}

// RevParse resolves rev to a commit id.
func (r *Repo) RevParse(ctx context.Context, rev string) (string, error) {
	if strings.HasPrefix(rev, "-") {
		return "", fmt.Errorf("gitx: bad revision %q", printable(rev))
	}
	res, err := r.Run(ctx, Cmd{Args: []string{"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"}})
	if err != nil {
		return "", err
	}
	if res.Code != 0 {
		return "", fmt.Errorf("gitx: %s names no commit in %s", printable(rev), r.dir)
	}
	return strings.TrimSpace(res.Stdout), nil
}

// Snapshot records the work tree as it is, tracked and untracked files
// alike (.gitignore respected, nested repositories left out), as a commit
// whose parent is HEAD, without touching the repository's index, HEAD or
// any ref: it builds the tree in a temporary index file under tmpDir. It
// returns HEAD and dirty=false when the work tree matches HEAD.
func (r *Repo) Snapshot(ctx context.Context, tmpDir string) (commit string, dirty bool, err error) {
	head, err := r.Head(ctx)
	if err != nil {
		return "", false, err
	}
	nested, err := r.NestedRepos(ctx)
	if err != nil {
		return "", false, err
	}
	dir, err := os.MkdirTemp(tmpDir, "aos-snapshot-")
	if err != nil {
		return "", false, fmt.Errorf("gitx: snapshot: make temp dir: %w", err)
	}
	defer os.RemoveAll(dir)
	idx := []string{"GIT_INDEX_FILE=" + filepath.Join(dir, "index")}
	run := func(env []string, args ...string) (string, error) {
		res, err := r.Run(ctx, Cmd{Args: args, Env: env, Timeout: worktreeTimeout})
		if err != nil {
			return "", fmt.Errorf("gitx: snapshot: %w", err)
		}
		if res.Code != 0 {
			return "", fmt.Errorf("gitx: snapshot: git %s: %s", args[0], FirstLine(res.Combined))
		}
		return strings.TrimSpace(res.Stdout), nil
	}
	if _, err := run(idx, "read-tree", head); err != nil {
		return "", false, err
	}
	add := []string{"add", "-A", "--", ".", ExcludeTempFiles}
	for _, n := range nested {
		add = append(add, ":(exclude,literal)"+n)
	}
	if _, err := run(idx, add...); err != nil {
		return "", false, err
	}
	tree, err := run(idx, "write-tree")
	if err != nil {
		return "", false, err
	}
	headTree, err := run(nil, "rev-parse", head+"^{tree}")
	if err != nil {
		return "", false, err
	}
	if tree == headTree {
		return head, false, nil
	}
	ident, err := r.IdentityEnv(ctx)
	if err != nil {
		return "", false, err
	}
	commit, err = run(append(idx, ident...), "commit-tree", tree, "-p", head, "-m", "aos: snapshot of uncommitted changes")
	if err != nil {
		return "", false, err
	}
	return commit, true, nil
}

// Worktrees lists the repository's work trees.
func (r *Repo) Worktrees(ctx context.Context) ([]Worktree, error) {
	res, err := r.Run(ctx, Cmd{Args: []string{"worktree", "list", "--porcelain", "-z"}})
	if err != nil {
		return nil, err
	}
	if res.Code != 0 {
		return nil, fmt.Errorf("gitx: list worktrees: %s", FirstLine(res.Combined))
	}
	var out []Worktree
	var cur *Worktree
	for _, f := range strings.Split(res.Stdout, "\x00") {
		if f == "" {
			cur = nil
			continue
		}
		k, v, _ := strings.Cut(f, " ")
		if k == "worktree" {
			out = append(out, Worktree{Path: v})
			cur = &out[len(out)-1]
			continue
		}
		if cur == nil {
			continue
		}
		switch k {
		case "HEAD":
			cur.Head = v
		case "branch":
			cur.Branch = v
		case "locked":
			cur.Locked = true
		case "prunable":
			cur.Prunable = true
		}
	}
	return out, nil
}

// FindWorktree returns the registered work tree at path, if any.
func (r *Repo) FindWorktree(ctx context.Context, path string) (Worktree, bool, error) {
	wts, err := r.Worktrees(ctx)
	if err != nil {
		return Worktree{}, false, err
	}
	for _, w := range wts {
		if w.Path == path {
			return w, true, nil
		}
	}
	return Worktree{}, false, nil
}

// AddWorktree checks out a new linked worktree at path (which must not
// exist) on branch: a new branch at base, or the existing branch as it
// is. The repository's own HEAD, index and files are not touched.
func (r *Repo) AddWorktree(ctx context.Context, path, branch, base string) error {
	if strings.HasPrefix(branch, "-") || strings.HasPrefix(base, "-") || !filepath.IsAbs(path) {
		return fmt.Errorf("gitx: add worktree: bad argument")
	}
	res, err := r.Run(ctx, Cmd{Args: []string{"show-ref", "--verify", "--quiet", "refs/heads/" + branch}})
	if err != nil {
		return err
	}
	args := []string{"worktree", "add", "--quiet", "--no-track", "-b", branch, "--", path, base}
	if res.Code == 0 {
		args = []string{"worktree", "add", "--quiet", "--", path, branch}
	}
	res, err = r.Run(ctx, Cmd{Args: args, Timeout: worktreeTimeout})
	if err != nil {
		return fmt.Errorf("gitx: add worktree %s: %w", path, err)
	}
	if res.Code != 0 {
		return fmt.Errorf("gitx: add worktree %s: %s", path, FirstLine(res.Combined))
	}
	return nil
}

// RemoveWorktree removes the linked worktree at path, its files and its
// registration, even when it is dirty or locked (commit what must stay
// first), and prunes registrations whose directory is gone. A path that is
// not registered is removed from disk only if it exists.
func (r *Repo) RemoveWorktree(ctx context.Context, path string) error {
	_, found, err := r.FindWorktree(ctx, path)
	if err != nil {
		return err
	}
	if found {
		res, err := r.Run(ctx, Cmd{Args: []string{"worktree", "remove", "--force", "--force", "--", path}, Timeout: worktreeTimeout})
		if err != nil {
			return fmt.Errorf("gitx: remove worktree %s: %w", path, err)
		}
		if res.Code != 0 {
			if _, statErr := os.Lstat(path); !errors.Is(statErr, fs.ErrNotExist) {
				return fmt.Errorf("gitx: remove worktree %s: %s", path, FirstLine(res.Combined))
			}
		}
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("gitx: remove worktree files %s: %w", path, err)
	}
	return r.PruneWorktrees(ctx)
}

// PruneWorktrees drops the registrations of worktrees whose directory is
// gone.
func (r *Repo) PruneWorktrees(ctx context.Context) error {
	res, err := r.Run(ctx, Cmd{Args: []string{"worktree", "prune"}})
	if err != nil {
		return err
	}
	if res.Code != 0 {
		return fmt.Errorf("gitx: prune worktrees: %s", FirstLine(res.Combined))
	}
	return nil
}
