package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/kernel"
)

// DefaultWorktreeRoot is where missions' worktrees live when Deps names no
// root: aos-worktrees beside the data dir, never inside it (the sandbox
// hides the data dir, and the worktree is the engine's workspace). It is
// the built-in loop's layout too: <root>/<mission id> on aos/<id8>.
func DefaultWorktreeRoot(dataDir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(dataDir)), "aos-worktrees")
}

// isProject reports whether dir is a project's checkout (a real .git
// directory) rather than a mission's linked worktree (a .git file).
func isProject(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil && fi.IsDir()
}

type worktreeInfo struct {
	Path string `json:"path"`
	Base string `json:"base"`
}

// addWorktree makes the mission's worktree of the project in.Workspace,
// at in.Base (the project's HEAD when empty), on the mission's branch: a
// journaled non-idempotent step whose probe reads git's own registration,
// so a crash never leaves two.
func (m *mission) addWorktree() (worktreeInfo, error) {
	var info worktreeInfo
	root := m.d.WorktreeRoot
	if root == "" {
		root = DefaultWorktreeRoot(m.d.DataDir)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return info, fmt.Errorf("backend: make the worktree root: %w", err)
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	path := filepath.Join(root, m.rc.MissionID())
	project := m.in.Workspace
	probe := func(ctx context.Context) (worktreeInfo, bool, error) {
		repo, err := gitx.Open(ctx, project)
		if err != nil {
			return info, false, err
		}
		res, err := repo.Run(ctx, gitx.Cmd{Args: []string{"worktree", "list", "--porcelain", "-z"}})
		if err != nil || res.Code != 0 {
			return info, false, fmt.Errorf("backend: list worktrees: %v %s", err, clip(res.Combined, 200))
		}
		for _, rec := range strings.Split(res.Stdout, "\x00\x00") {
			var p, head, branch string
			locked := false
			for _, f := range strings.Split(rec, "\x00") {
				switch {
				case strings.HasPrefix(f, "worktree "):
					p = strings.TrimPrefix(f, "worktree ")
				case strings.HasPrefix(f, "HEAD "):
					head = strings.TrimPrefix(f, "HEAD ")
				case strings.HasPrefix(f, "branch "):
					branch = strings.TrimPrefix(f, "branch ")
				case strings.HasPrefix(f, "locked"):
					locked = true
				}
			}
			if p == path && branch == "refs/heads/"+m.branch && !locked {
				return worktreeInfo{Path: path, Base: head}, true, nil
			}
		}
		return info, false, nil
	}
	res, err := m.rc.Step(kernel.StepSpec{Kind: "setup", Name: "worktree_add", Effect: kernel.EffectNonIdempotent,
		Request: map[string]string{"project": project, "branch": m.branch, "base": m.in.Base},
		Reconcile: func(ctx context.Context, _ json.RawMessage, _ string) (kernel.ReconcileOutcome, error) {
			i, ok, err := probe(ctx)
			if err != nil || !ok {
				return kernel.ReconcileOutcome{Answer: kernel.ReconcileNotDone}, err
			}
			return kernel.ReconcileOutcome{Answer: kernel.ReconcileDone, Result: i}, nil
		}},
		func(ctx context.Context, _ string) (kernel.Outcome, error) {
			if i, ok, err := probe(ctx); err != nil || ok {
				return kernel.Outcome{Result: i}, err
			}
			repo, err := gitx.Open(ctx, project)
			if err != nil {
				return kernel.Outcome{}, err
			}
			base := m.in.Base
			if base == "" {
				r, err := repo.Run(ctx, gitx.Cmd{Args: []string{"rev-parse", "--verify", "HEAD^{commit}"}})
				if err != nil || r.Code != 0 {
					return kernel.Outcome{}, fmt.Errorf("backend: the project has no HEAD commit: %v", err)
				}
				base = strings.TrimSpace(r.Stdout)
			}
			// A partial worktree (a crash inside git worktree add) is
			// cleared and made again.
			_, _ = repo.Run(ctx, gitx.Cmd{Args: []string{"worktree", "remove", "--force", "--force", path}})
			_, _ = repo.Run(ctx, gitx.Cmd{Args: []string{"worktree", "prune"}})
			if _, err := os.Lstat(path); err == nil {
				if err := os.RemoveAll(path); err != nil {
					return kernel.Outcome{}, fmt.Errorf("backend: clear %s: %w", path, err)
				}
			}
			args := []string{"worktree", "add", "-q", "-b", m.branch, path, base}
			if r, _ := repo.Run(ctx, gitx.Cmd{Args: []string{"rev-parse", "--verify", "--quiet", "refs/heads/" + m.branch}}); r.Code == 0 {
				args = []string{"worktree", "add", "-q", path, m.branch}
			}
			r, err := repo.Run(ctx, gitx.Cmd{Args: args})
			if err != nil || r.Code != 0 {
				return kernel.Outcome{}, fmt.Errorf("backend: git worktree add: %v %s", err, clip(r.Combined, 300))
			}
			return kernel.Outcome{Result: worktreeInfo{Path: path, Base: base}}, nil
		})
	if err != nil {
		return info, err
	}
	return info, json.Unmarshal(res, &info)
}

// removeWorktree removes the mission's worktree once its work is
// committed; its branch and commits stay. Idempotent.
func (m *mission) removeWorktree(project, path string) error {
	_, err := m.rc.Step(kernel.StepSpec{Kind: "setup", Name: "worktree_remove", Effect: kernel.EffectIdempotentWrite,
		Request: map[string]string{"project": project, "path": path}},
		func(ctx context.Context, _ string) (kernel.Outcome, error) {
			if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
				return kernel.Outcome{Result: map[string]bool{"removed": false}}, nil
			}
			repo, err := gitx.Open(ctx, project)
			if err != nil {
				return kernel.Outcome{}, err
			}
			r, err := repo.Run(ctx, gitx.Cmd{Args: []string{"worktree", "remove", "--force", path}})
			if err != nil || r.Code != 0 {
				return kernel.Outcome{}, fmt.Errorf("backend: git worktree remove: %v %s", err, clip(r.Combined, 300))
			}
			return kernel.Outcome{Result: map[string]bool{"removed": true}}, nil
		})
	return err
}

// confinement is what an engine and its verification must not see beyond
// the sandbox's own hidden dirs: Deps.Hide (other projects), the worktree
// root (other missions' worktrees) and the dir holding this worktree. The
// worktree itself is mounted back writable by the sandbox; the project's
// git dir (which the worktree's .git file names) is shown read-only, so
// git works in the worktree.
func (m *mission) confinement() (hide, expose []string) {
	hide = append(hide, m.d.Hide...)
	root := m.d.WorktreeRoot
	if root == "" {
		root = DefaultWorktreeRoot(m.d.DataDir)
	}
	hide = append(hide, root, filepath.Dir(m.in.Workspace))
	if gd := m.setup.GitDir; gd != "" && filepath.Base(filepath.Dir(gd)) == "worktrees" {
		expose = append(expose, filepath.Dir(filepath.Dir(gd)))
	}
	out := hide[:0]
	for _, h := range hide {
		if h != "" && filepath.IsAbs(h) && filepath.Clean(h) != "/" {
			out = append(out, filepath.Clean(h))
		}
	}
	return out, expose
}
