package gitx_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/gitx"
)

// TestLinkedWorktree: a worktree aos made opens as a workspace; a .git
// file rewritten to name another repository's gitdir, a worktree
// registered elsewhere, or a gitdir outside a project's .git is refused,
// so host git is never sent to a repository the project does not own.
func TestLinkedWorktree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	r, err := gitx.Open(ctx, repo)
	if err != nil {
		t.Fatal(err)
	}
	head, err := r.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.EvalSymlinks(t.TempDir())
	wt := filepath.Join(root, "m1")
	if err := r.AddWorktree(ctx, wt, "aos/m1", head); err != nil {
		t.Fatal(err)
	}
	if w, ok, err := r.FindWorktree(ctx, wt); err != nil || !ok || w.Branch != "refs/heads/aos/m1" || w.Head != head || w.Locked {
		t.Fatalf("FindWorktree = %+v %v %v", w, ok, err)
	}
	if top, main, err := gitx.CheckLinkedWorktree(ctx, wt); err != nil || top != wt || main != repo {
		t.Fatalf("CheckLinkedWorktree = %q %q %v", top, main, err)
	}
	if _, err := gitx.OpenWorkspace(ctx, wt); err != nil {
		t.Fatalf("OpenWorkspace(worktree): %v", err)
	}
	if _, err := gitx.CheckProject(ctx, wt); !errors.Is(err, gitx.ErrNotProject) {
		t.Fatalf("a worktree must not pass as a project: %v", err)
	}

	other := newRepo(t)
	ro, err := gitx.Open(ctx, other)
	if err != nil {
		t.Fatal(err)
	}
	ohead, err := ro.Head(ctx)
	if err != nil {
		t.Fatal(err)
	}
	owt := filepath.Join(root, "o1")
	if err := ro.AddWorktree(ctx, owt, "aos/o1", ohead); err != nil {
		t.Fatal(err)
	}
	plain := t.TempDir()
	for _, c := range []struct{ name, gitfile string }{
		{"another project's worktree gitdir", "gitdir: " + filepath.Join(other, ".git", "worktrees", "o1")},
		{"another project's .git", "gitdir: " + filepath.Join(other, ".git")},
		{"relative gitdir", "gitdir: ../x/.git/worktrees/m1"},
		{"gitdir outside any .git", "gitdir: " + filepath.Join(plain, "worktrees", "m1")},
		{"not a gitdir line", "hello"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "w")
			writeFile(t, filepath.Join(dir, ".git"), c.gitfile+"\n", 0o644)
			if _, err := gitx.OpenWorkspace(ctx, dir); !errors.Is(err, gitx.ErrNotProject) {
				t.Fatalf("OpenWorkspace: %v, want ErrNotProject", err)
			}
		})
	}
	// The real worktree's .git rewritten to the other project's worktree.
	orig, _ := os.ReadFile(filepath.Join(wt, ".git"))
	writeFile(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(other, ".git", "worktrees", "o1")+"\n", 0o644)
	if _, err := gitx.OpenWorkspace(ctx, wt); !errors.Is(err, gitx.ErrNotProject) {
		t.Fatalf("a redirected .git file: %v, want ErrNotProject", err)
	}
	writeFile(t, filepath.Join(wt, ".git"), string(orig), 0o644)

	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatal(err)
	}
	if err := r.RemoveWorktree(ctx, wt); err != nil {
		t.Fatalf("removing twice: %v", err)
	}
	if _, ok, _ := r.FindWorktree(ctx, wt); ok {
		t.Error("still registered after removal")
	}
	if _, err := os.Stat(wt); !os.IsNotExist(err) {
		t.Errorf("files left: %v", err)
	}
	if b := rawGit(t, repo, "branch", "--list", "aos/m1"); !strings.Contains(b, "aos/m1") {
		t.Error("the branch went with the worktree")
	}
}
