package gitx

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Linked is a linked worktree (git worktree add) opened through its
// administrative directory, which the caller recorded when it made the
// worktree. Every run names that directory and the work tree explicitly
// (--git-dir, --work-tree), so the worktree's own .git file, which a
// sandboxed engine may rewrite to point at a repository of its making, is
// never read. Its effective config (the common config plus the worktree's
// own) names no program, checked when opened.
type Linked struct {
	workTree, gitDir string
}

// WorkTree is the work tree's real path.
func (l *Linked) WorkTree() string { return l.workTree }

// GitDir is the worktree's administrative directory.
func (l *Linked) GitDir() string { return l.gitDir }

// OpenLinked checks that gitDir is the administrative directory of the
// linked worktree workTree (its gitdir file names workTree/.git, its
// commondir a real repository) and that the effective config names no
// program git could run, and returns it.
func OpenLinked(ctx context.Context, workTree, gitDir string) (*Linked, error) {
	wt, err := filepath.EvalSymlinks(workTree)
	if err != nil {
		return nil, &Error{Code: CodeNotProject, Msg: fmt.Sprintf("worktree %s cannot be resolved", workTree), Err: err}
	}
	gd, err := filepath.EvalSymlinks(gitDir)
	if err != nil {
		return nil, &Error{Code: CodeNotProject, Msg: fmt.Sprintf("worktree admin dir %s cannot be resolved", gitDir), Err: err}
	}
	back, err := os.ReadFile(filepath.Join(gd, "gitdir"))
	if err != nil {
		return nil, refuse(CodeNotProject, "%s is not a worktree's admin dir (no gitdir file)", gd)
	}
	if filepath.Clean(strings.TrimSpace(string(back))) != filepath.Join(wt, ".git") {
		return nil, refuse(CodeNotProject, "admin dir %s does not belong to worktree %s", gd, wt)
	}
	if fi, err := os.Lstat(filepath.Join(gd, "commondir")); err != nil || !fi.Mode().IsRegular() {
		return nil, refuse(CodeNotProject, "%s is not a linked worktree's admin dir (no commondir file)", gd)
	}
	l := &Linked{workTree: wt, gitDir: gd}
	res, err := l.Run(ctx, Cmd{Args: []string{"config", "--list", "--show-scope", "--show-origin", "-z"}})
	if err != nil {
		return nil, fmt.Errorf("gitx: read the config of worktree %s: %w", wt, err)
	}
	if res.Code != 0 {
		return nil, refuse(CodeUnsafeConfig, "cannot read the git config of worktree %s: %s", wt, FirstLine(res.Combined))
	}
	if bad := unsafeConfig(res.Stdout); len(bad) > 0 {
		return nil, refuse(CodeUnsafeConfig,
			"the git config of worktree %s sets %s, which can make git run a program on the host; aos runs no git there",
			wt, strings.Join(bad, ", "))
	}
	return l, nil
}

// LinkedGitDir reads the administrative directory a freshly made linked
// worktree's .git file names. Call it only before anything else could have
// written the worktree (right after `git worktree add`), and keep the
// answer: later, the file is the worktree writer's.
func LinkedGitDir(workTree string) (string, error) {
	b, err := os.ReadFile(filepath.Join(workTree, ".git"))
	if err != nil {
		return "", refuse(CodeNotProject, "worktree %s has no .git file", workTree)
	}
	p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok || !filepath.IsAbs(p) {
		return "", refuse(CodeNotProject, "worktree %s: .git is not a linked worktree's pointer", workTree)
	}
	return filepath.Clean(p), nil
}

// Run runs git in the work tree with the admin dir and work tree named.
func (l *Linked) Run(ctx context.Context, c Cmd) (Result, error) {
	c.Dir = l.workTree
	c.Args = append([]string{"--git-dir=" + l.gitDir, "--work-tree=" + l.workTree}, c.Args...)
	return Run(ctx, c)
}
