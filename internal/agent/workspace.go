package agent

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
)

// actor is who registers projects and creates missions for agents, in the
// mission service's audit log.
func actor(identity string) mission.Actor { return mission.Actor("agent:" + identity) }

// root is the workspace root with its symbolic links resolved.
func (s *Service) root() (string, error) {
	r, err := filepath.EvalSymlinks(s.opts.WorkspaceRoot)
	if err != nil {
		return "", &Error{Code: CodeInvalidWorkspace, Message: "the workspace root does not exist", Guidance: "create it, or set the workspace root", Err: err}
	}
	return filepath.Abs(r)
}

// canonicalExisting resolves an existing workspace's symbolic links and
// confines it to the workspace root.
func (s *Service) canonicalExisting(p string) (string, error) {
	root, err := s.root()
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", &Error{Code: CodeInvalidWorkspace, Message: "the workspace is not an existing directory", Guidance: defaultGuidance(CodeInvalidWorkspace)}
	}
	if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
		return "", &Error{Code: CodeInvalidWorkspace, Message: "the workspace is not an existing directory", Guidance: defaultGuidance(CodeInvalidWorkspace)}
	}
	rel, err := filepath.Rel(root, real)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", &Error{Code: CodeInvalidWorkspace, Message: "the workspace must be a directory inside the workspace root " + root, Guidance: defaultGuidance(CodeInvalidWorkspace)}
	}
	return real, nil
}

// workspaceFree refuses a workspace another agent has, or another
// operation (not self) is preparing.
func (s *Service) workspaceFree(ctx context.Context, dir, self string) error {
	s.mu.Lock()
	claim, claimed := s.wsClaims[dir]
	s.mu.Unlock()
	if claimed && claim != self {
		return &Error{Code: CodeWorkspaceInUse, Message: "another preparation is using this workspace", Guidance: defaultGuidance(CodeWorkspaceInUse)}
	}
	a, err := s.st.GetAgentByWorkspace(ctx, dir)
	switch {
	case err == nil:
		return &Error{Code: CodeWorkspaceInUse, Message: "agent " + a.ID + " has this workspace", Guidance: "use agent " + a.ID + " (turn.send), or choose another workspace"}
	case errors.Is(err, store.ErrNotFound):
		return nil
	default:
		return storageErr("look up the workspace's agent", err)
	}
}

// claim serializes preparations competing for one canonical workspace:
// the first holds it until its agent is recorded (then the agents table's
// unique workspace holds it) or it fails. In this process the claim is in
// memory; across servers on one database it is a row in
// agent_workspace_claims, which another operation takes over only once
// the holder is no longer accepted or running.
func (s *Service) claim(ctx context.Context, dir, opID string) error {
	inUse := &Error{Code: CodeWorkspaceInUse, Message: "another preparation is using this workspace", Guidance: defaultGuidance(CodeWorkspaceInUse)}
	s.mu.Lock()
	if c, ok := s.wsClaims[dir]; ok && c != opID {
		s.mu.Unlock()
		return inUse
	}
	s.wsClaims[dir] = opID
	s.mu.Unlock()
	if err := s.st.ClaimAgentWorkspace(ctx, dir, opID, s.now()); err != nil {
		s.release(dir, opID)
		if errors.Is(err, store.ErrConflict) {
			return inUse
		}
		return storageErr("claim the workspace", err)
	}
	if err := s.workspaceFree(ctx, dir, opID); err != nil {
		s.release(dir, opID)
		return err
	}
	return nil
}

func (s *Service) release(dir, opID string) {
	s.mu.Lock()
	if s.wsClaims[dir] == opID {
		delete(s.wsClaims, dir)
	}
	s.mu.Unlock()
	if err := s.st.ReleaseAgentWorkspace(context.Background(), dir, opID); err != nil {
		s.opts.Logger.Warn("agent: release a workspace claim", "operation", opID, "err", err.Error())
	}
}

type madeWorkspace struct {
	dir, projectID string
}

// makeWorkspace claims the workspace and registers it as a project through
// the mission service (the one path for project checks). A new one is
// made directly under the workspace root (an existing folder is an error,
// never reused), filled from the package's template and instructions
// (AGENTS.md) and committed; an existing one is used as it is.
func (s *Service) makeWorkspace(ctx context.Context, r *opRun, p pkgInfo, w Workspace) (madeWorkspace, error) {
	root, err := s.root()
	if err != nil {
		return madeWorkspace{}, err
	}
	if w.Kind == WorkspaceExisting {
		dir, err := s.canonicalExisting(w.Path)
		if err != nil {
			return madeWorkspace{}, err
		}
		if err := s.claim(ctx, dir, r.op.ID); err != nil {
			return madeWorkspace{}, err
		}
		ps, err := s.ms.ListProjects(ctx)
		if err != nil {
			s.release(dir, r.op.ID)
			return madeWorkspace{}, &Error{Code: CodeProjectPreparationFailed, Message: "cannot list projects", Err: err}
		}
		for _, pr := range ps {
			if pr.Dir == dir {
				return madeWorkspace{dir: dir, projectID: pr.ID}, nil
			}
		}
		rel, _ := filepath.Rel(root, dir)
		pr, err := s.ms.CreateProject(ctx, actor(r.op.Identity), mission.CreateProjectRequest{Name: filepath.Base(dir), Path: filepath.ToSlash(rel), Mode: mission.ProjectExisting})
		if err != nil {
			s.release(dir, r.op.ID)
			return madeWorkspace{}, &Error{Code: CodeInvalidWorkspace, Message: strings.TrimPrefix(err.Error(), "mission: "), Guidance: "choose the top level of a git repository inside the workspace root", Err: err}
		}
		return madeWorkspace{dir: dir, projectID: pr.ID}, nil
	}
	name := w.Name
	if name == "" {
		name = strings.NewReplacer("/", "-", ".", "-").Replace(p.src.m.PackageID) + "-" + s.opts.Now().UTC().Format("20060102-150405")
	}
	dir := filepath.Join(root, name)
	if err := s.claim(ctx, dir, r.op.ID); err != nil {
		return madeWorkspace{}, err
	}
	if _, err := os.Lstat(dir); !errors.Is(err, fs.ErrNotExist) {
		s.release(dir, r.op.ID)
		return madeWorkspace{}, &Error{Code: CodeInvalidWorkspace, Message: "a folder named " + name + " exists in the workspace root; it is not reused",
			Guidance: `choose another name, or prepare with {"kind":"existing","path":...} to use it`}
	}
	pr, err := s.ms.CreateProject(ctx, actor(r.op.Identity), mission.CreateProjectRequest{Name: name, Path: name, Mode: mission.ProjectInit})
	if err != nil {
		s.release(dir, r.op.ID)
		return madeWorkspace{}, &Error{Code: CodeProjectPreparationFailed, Message: strings.TrimPrefix(err.Error(), "mission: "), Err: err}
	}
	if err := s.materialize(ctx, p, pr.Dir); err != nil {
		return madeWorkspace{dir: pr.Dir, projectID: pr.ID}, &Error{Code: CodeProjectPreparationFailed, Message: "workspace template: " + err.Error(),
			Guidance: "the workspace " + pr.Dir + " and its project remain for inspection"}
	}
	return madeWorkspace{dir: pr.Dir, projectID: pr.ID}, nil
}

// materialize writes the package's template files and instructions into a
// fresh workspace and commits them, so every mission's worktree has them.
func (s *Service) materialize(ctx context.Context, p pkgInfo, dir string) error {
	m := p.src.m
	installed := os.DirFS(s.installDir(m.PackageID))
	if p.hasRow && p.row.Dir != "" {
		installed = os.DirFS(p.row.Dir)
	}
	if m.Template != "" {
		sub, err := fs.Sub(installed, m.Template)
		if err != nil {
			return err
		}
		err = fs.WalkDir(sub, ".", func(n string, d fs.DirEntry, err error) error {
			if err != nil || n == "." {
				return err
			}
			dst := filepath.Join(dir, filepath.FromSlash(n))
			if d.IsDir() {
				return os.MkdirAll(dst, 0o755)
			}
			if !d.Type().IsRegular() {
				return errors.New(n + " is not a regular file")
			}
			b, err := fs.ReadFile(sub, n)
			if err != nil {
				return err
			}
			return writeNew(dst, b)
		})
		if err != nil {
			return err
		}
	}
	if m.Instructions != "" {
		b, err := fs.ReadFile(installed, m.Instructions)
		if err != nil {
			return err
		}
		if err := writeNew(filepath.Join(dir, "AGENTS.md"), b); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	env := []string{"GIT_AUTHOR_NAME=Agent OS", "GIT_AUTHOR_EMAIL=aos@aos.invalid", "GIT_COMMITTER_NAME=Agent OS", "GIT_COMMITTER_EMAIL=aos@aos.invalid"}
	if res, err := gitx.Run(ctx, gitx.Cmd{Dir: dir, Args: []string{"add", "-A"}, Timeout: time.Minute}); err != nil || res.Code != 0 {
		return errors.New("git add: " + gitx.FirstLine(res.Combined))
	}
	res, err := gitx.Run(ctx, gitx.Cmd{Dir: dir, Env: env, Args: []string{"commit", "-q", "--allow-empty", "-m", "Workspace from package " + m.PackageID}, Timeout: time.Minute})
	if err != nil || res.Code != 0 {
		return errors.New("git commit: " + gitx.FirstLine(res.Combined))
	}
	return nil
}

func writeNew(p string, b []byte) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// recheck confirms an agent against the registry: recorded, created by
// this operation, its project registered at its workspace, which exists.
func (s *Service) recheck(ctx context.Context, agentID, opID string) error {
	a, err := s.st.GetAgent(ctx, agentID)
	if err != nil || (opID != "" && a.OperationID != opID) {
		return &Error{Code: CodeAgentUnavailable, Message: "agent " + agentID + " is not recorded", Guidance: "inspect aos agent ls"}
	}
	return s.recheckRecord(ctx, a)
}

// recheckRecord is recheck of an agent row already read: its project is
// still registered at its workspace, and the workspace is a directory.
func (s *Service) recheckRecord(ctx context.Context, a store.AgentRecord) error {
	pr, err := s.ms.GetProject(ctx, a.ProjectID)
	if err != nil || pr.Dir != a.Workspace {
		return &Error{Code: CodeAgentUnavailable, Message: "agent " + a.ID + "'s project is no longer registered at its workspace", Guidance: "inspect the agent's workspace and projects"}
	}
	if fi, err := os.Stat(a.Workspace); err != nil || !fi.IsDir() {
		return &Error{Code: CodeAgentUnavailable, Message: "agent " + a.ID + "'s workspace is gone", Guidance: "restore " + a.Workspace + " or prepare a new agent"}
	}
	return nil
}
