package mission

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/aos-run/aos/internal/wire"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/store"
)

// Project modes: how CreateProject obtains the directory.
const (
	ProjectInit     = "init"     // a new directory, git init with an empty first commit
	ProjectExisting = "existing" // an existing git work tree
	ProjectClone    = "clone"    // a clone of Origin
)

// CreateProjectRequest is wire.CreateProjectRequest, its JSON form on the API.
type CreateProjectRequest = wire.CreateProjectRequest

// UpdateProjectRequest is wire.UpdateProjectRequest, its JSON form on the API.
type UpdateProjectRequest = wire.UpdateProjectRequest

// Project is wire.Project, its JSON form on the API.
type Project = wire.Project

func (s *Service) projectView(p store.Project) Project {
	return Project{ID: p.ID, Name: p.Name, Path: p.Path, Dir: filepath.Join(s.rootDir(), filepath.FromSlash(p.Path)), Mode: p.Mode,
		Origin: p.Origin, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
}

// rootDir is the workspace root with its symbolic links resolved, as
// project paths are relative to it.
func (s *Service) rootDir() string {
	if r, err := filepath.EvalSymlinks(s.opts.WorkspaceRoot); err == nil {
		if a, err := filepath.Abs(r); err == nil {
			return a
		}
	}
	return filepath.Clean(s.opts.WorkspaceRoot)
}

func checkProjectName(name string) error {
	if strings.TrimSpace(name) == "" || utf8.RuneCountInString(name) > 100 || hasControl(name) || !utf8.ValidString(name) {
		return invalid("name must be 1..100 characters without control characters")
	}
	return nil
}

// CreateProject registers a project, making its directory first for init
// and clone. Nothing is left on disk when it fails: a directory it created
// is removed, and a directory that was empty is emptied again.
func (s *Service) CreateProject(ctx context.Context, actor Actor, req CreateProjectRequest) (Project, error) {
	if err := checkProjectName(req.Name); err != nil {
		return Project{}, err
	}
	switch req.Mode {
	case ProjectInit, ProjectExisting:
		if req.URL != "" {
			return Project{}, invalid("url is only for mode \"clone\"")
		}
	case ProjectClone:
		if err := CheckCloneURL(req.URL); err != nil {
			return Project{}, err
		}
	default:
		return Project{}, invalid("mode must be init, existing or clone")
	}
	pl, err := s.resolve(req.Path, invalid("path must be a directory inside the workspace root %s (relative to it, or absolute inside it)", s.opts.WorkspaceRoot))
	if err != nil {
		return Project{}, err
	}
	rel := filepath.ToSlash(pl.rel)
	if err := s.pathFree(ctx, rel); err != nil {
		return Project{}, err
	}
	var undo func()
	switch req.Mode {
	case ProjectExisting:
		err = s.checkWorkTree(ctx, pl)
	case ProjectInit:
		undo, err = s.makeDir(pl)
		if err == nil {
			err = s.gitInit(ctx, pl.abs)
		}
	case ProjectClone:
		var target cloneTarget
		if target, err = s.checkCloneTarget(ctx, req.URL); err != nil {
			return Project{}, err
		}
		undo, err = s.makeDir(pl)
		if err == nil {
			err = s.gitClone(ctx, req.URL, pl.abs, target)
		}
	}
	if err == nil {
		var b [8]byte
		_, _ = rand.Read(b[:])
		now := s.now().UnixMilli()
		p := store.Project{ID: "prj_" + hex.EncodeToString(b[:]), Name: req.Name, Path: rel, Mode: req.Mode, CreatedAt: now, UpdatedAt: now}
		if req.Mode == ProjectClone {
			p.Origin = req.URL
		}
		if err = s.st.InsertProject(ctx, p); err == nil {
			s.audit(ctx, actor, "project.create", p.ID, map[string]any{"mode": p.Mode, "path": p.Path, "origin": p.Origin})
			return s.projectView(p), nil
		}
		if errors.Is(err, store.ErrConflict) {
			err = &Error{Code: CodeConflict, Msg: "another project is registered at this path", Err: err}
		} else {
			err = translate("create project", err)
		}
	}
	if undo != nil {
		undo()
	}
	return Project{}, err
}

// pathFree refuses a path a project is registered at already. The unique
// index on projects.path closes the race this check leaves open.
func (s *Service) pathFree(ctx context.Context, rel string) error {
	ps, err := s.st.ListProjects(ctx)
	if err != nil {
		return translate("list projects", err)
	}
	for _, p := range ps {
		if p.Path == rel {
			return &Error{Code: CodeConflict, Msg: "another project is registered at this path"}
		}
	}
	return nil
}

// makeDir prepares pl for init or clone: an existing directory must be
// empty; a missing one is created, exclusively, so that two requests never
// share it. undo puts the disk back as it was.
func (s *Service) makeDir(pl place) (undo func(), err error) {
	// Every directory operation goes through an os.Root on the workspace
	// root: a symbolic link swapped in after resolve (by a mission's agent
	// writing in its own workspace, say) cannot make aos create, or on
	// undo remove, anything outside the root.
	r, err := os.OpenRoot(pl.root)
	if err != nil {
		return nil, invalid("cannot open the workspace root")
	}
	defer r.Close()
	if pl.exists {
		fi, err := r.Stat(pl.rel)
		if err != nil || !fi.IsDir() {
			return nil, &Error{Code: CodeConflict, Msg: "path exists and is not a directory"}
		}
		entries, err := readDirIn(r, pl.rel)
		if err != nil {
			return nil, fmt.Errorf("mission: read project directory: %w", err)
		}
		if len(entries) > 0 {
			return nil, &Error{Code: CodeConflict, Msg: "directory exists and is not empty (use mode \"existing\" to register a repository)"}
		}
		return func() { inRoot(pl.root, func(r *os.Root) { emptyDirIn(r, pl.rel) }) }, nil
	}
	missingRel, err := filepath.Rel(pl.root, pl.missing)
	if err != nil {
		return nil, invalid("cannot create the project directory")
	}
	parent := filepath.Dir(pl.rel)
	if parent != "." {
		if err := r.MkdirAll(parent, 0o755); err != nil {
			return nil, invalid("cannot create the project directory's parent")
		}
	}
	removeParents := func(r *os.Root) {
		// Remove the parents this call may have made, if still empty.
		for d := parent; d != "." && len(d) >= len(missingRel); d = filepath.Dir(d) {
			if r.Remove(d) != nil {
				return
			}
		}
	}
	if err := r.Mkdir(pl.rel, 0o755); err != nil {
		removeParents(r)
		if errors.Is(err, fs.ErrExist) {
			return nil, &Error{Code: CodeConflict, Msg: "directory was created meanwhile"}
		}
		return nil, invalid("cannot create the project directory")
	}
	return func() {
		inRoot(pl.root, func(r *os.Root) {
			_ = r.RemoveAll(pl.rel)
			removeParents(r)
		})
	}, nil
}

// inRoot runs fn on the workspace root opened as an os.Root; a root that
// cannot be opened any more leaves nothing to undo.
func inRoot(root string, fn func(r *os.Root)) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return
	}
	defer r.Close()
	fn(r)
}

// readDirIn lists dir inside r.
func readDirIn(r *os.Root, dir string) ([]fs.DirEntry, error) {
	f, err := r.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// emptyDirIn removes what is inside dir (within r), keeping dir.
func emptyDirIn(r *os.Root, dir string) {
	entries, _ := readDirIn(r, dir)
	for _, e := range entries {
		_ = r.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// checkWorkTree requires an existing directory that is a project: the
// top level of a git work tree with a real .git directory (gitx.CheckProject,
// the one check every front end and the engine use).
func (s *Service) checkWorkTree(ctx context.Context, pl place) error {
	if fi, err := os.Stat(pl.abs); !pl.exists || err != nil || !fi.IsDir() {
		return invalid("%s is not an existing directory under the workspace root %s: put the repository there, or use mode \"init\" to create one", pl.rel, pl.root)
	}
	if _, err := gitx.CheckProject(ctx, pl.abs); err != nil {
		if errors.Is(err, gitx.ErrNotProject) {
			return invalid("%s (under the workspace root %s) is not the top level of a git work tree with a .git directory; use mode \"init\" to create a repository", pl.rel, pl.root)
		}
		return gitFailure("git rev-parse", "", err)
	}
	return nil
}

// gitInit makes dir a repository on branch main with an empty first commit,
// so that HEAD exists and the engine can branch from it.
func (s *Service) gitInit(ctx context.Context, dir string) error {
	if out, err := s.runGit(ctx, gitx.Cmd{Dir: dir, Args: []string{"init", "-q", "-b", "main"}}); err != nil {
		return gitFailure("git init", out, err)
	}
	out, err := s.runGit(ctx, gitx.Cmd{Dir: dir, Env: []string{"GIT_AUTHOR_NAME=Agent OS", "GIT_AUTHOR_EMAIL=aos@aos.invalid",
		"GIT_COMMITTER_NAME=Agent OS", "GIT_COMMITTER_EMAIL=aos@aos.invalid"},
		Args: []string{"commit", "-q", "--allow-empty", "-m", "Initial commit"}})
	if err != nil {
		return gitFailure("git commit", out, err)
	}
	return nil
}

// gitClone clones url into dir (empty) under the clone timeout. gitx allows
// only the https and ssh transports, no submodules, hooks or prompts; the
// clone adds its address pinning and refuses redirects.
func (s *Service) gitClone(ctx context.Context, url, dir string, target cloneTarget) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.CloneTimeout)
	defer cancel()
	args := append(target.gitOptions(), "clone", "--quiet", "--no-recurse-submodules", "--", url, dir)
	// The context's deadline is the clone timeout; gitx's own bound is
	// only a backstop behind it.
	out, err := s.runGit(ctx, gitx.Cmd{Args: args, Timeout: s.opts.CloneTimeout + time.Minute})
	if ctx.Err() == context.DeadlineExceeded {
		return &Error{Code: CodeGitFailed, Msg: fmt.Sprintf("git clone did not finish within %s", s.opts.CloneTimeout), Err: ctx.Err()}
	}
	if err != nil {
		return gitFailure("git clone", out, err)
	}
	return nil
}

// ListProjects returns every project, oldest first.
func (s *Service) ListProjects(ctx context.Context) ([]Project, error) {
	ps, err := s.st.ListProjects(ctx)
	if err != nil {
		return nil, translate("list projects", err)
	}
	out := make([]Project, 0, len(ps))
	for _, p := range ps {
		out = append(out, s.projectView(p))
	}
	return out, nil
}

// GetProject returns one project.
func (s *Service) GetProject(ctx context.Context, id string) (Project, error) {
	p, err := s.st.GetProject(ctx, id)
	if err != nil {
		return Project{}, projectErr("get project", err)
	}
	return s.projectView(p), nil
}

// UpdateProject renames a project.
func (s *Service) UpdateProject(ctx context.Context, actor Actor, id string, req UpdateProjectRequest) (Project, error) {
	if err := checkProjectName(req.Name); err != nil {
		return Project{}, err
	}
	if err := s.st.RenameProject(ctx, id, req.Name, s.now().UnixMilli()); err != nil {
		return Project{}, projectErr("rename project", err)
	}
	s.audit(ctx, actor, "project.update", id, nil)
	return s.GetProject(ctx, id)
}

// DeleteProject unregisters a project. Its directory stays on disk and its
// missions keep their project id.
func (s *Service) DeleteProject(ctx context.Context, actor Actor, id string) error {
	if err := s.st.DeleteProject(ctx, id); err != nil {
		return projectErr("delete project", err)
	}
	s.audit(ctx, actor, "project.delete", id, nil)
	return nil
}

// projectDir returns the directory of project id for a new mission.
func (s *Service) projectDir(ctx context.Context, id string) (string, error) {
	p, err := s.GetProject(ctx, id)
	if err != nil {
		return "", err
	}
	return p.Dir, nil
}

func projectErr(doing string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return &Error{Code: CodeNotFound, Msg: "no project with this id", Err: err}
	}
	return translate(doing, err)
}
