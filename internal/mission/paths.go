package mission

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// place is a path resolved inside the workspace root.
type place struct {
	root   string // the workspace root, resolved
	abs    string // absolute, symbolic links of its existing part resolved
	rel    string // relative to the (resolved) root, never "." or ".."
	exists bool
	// missing is the first component of abs that does not exist (the
	// directory whose removal undoes a MkdirAll of abs); "" when exists.
	missing string
}

// resolve places p, relative to the workspace root or absolute, inside the
// root. The deepest existing ancestor is resolved with its symbolic links
// and must lie inside the root, the root itself excluded; the components
// below it, which do not exist yet, are taken as written (after lexical
// cleaning, so none of them is ".."). Empty paths, NUL and other control
// characters are refused, and so is any path through a ".git" directory
// (in any case). Every refusal is the same error, bad, so that a
// caller learns nothing about paths outside the root; only a workspace root
// that cannot be resolved has its own error (rootMissing), which names it.
func (s *Service) resolve(p string, bad error) (place, error) {
	if p == "" || hasControl(p) || s.opts.WorkspaceRoot == "" {
		return place{}, bad
	}
	root, err := filepath.EvalSymlinks(s.opts.WorkspaceRoot)
	if err != nil {
		return place{}, s.rootMissing(err)
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return place{}, bad
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	p = filepath.Clean(p)
	// Walk up to the deepest ancestor that exists (as a name: a dangling
	// link exists and then fails to resolve).
	cur, rest := p, []string(nil)
	for {
		_, err := os.Lstat(cur)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return place{}, bad
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return place{}, bad
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
	real, err := filepath.EvalSymlinks(cur)
	if err != nil {
		return place{}, bad
	}
	abs := filepath.Join(append([]string{real}, rest...)...)
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return place{}, bad
	}
	// Nothing lives inside a repository's .git directory: a project or a
	// workspace there would let git objects and hooks be written.
	for _, c := range strings.Split(rel, string(filepath.Separator)) {
		if strings.EqualFold(c, ".git") {
			return place{}, bad
		}
	}
	pl := place{root: root, abs: abs, rel: rel, exists: len(rest) == 0}
	if len(rest) > 0 {
		pl.missing = filepath.Join(real, rest[0])
	}
	return pl, nil
}

// confine resolves a workspace inside the workspace root, following
// symbolic links, and requires an existing directory.
func (s *Service) confine(ws string) (string, error) {
	bad := invalid("workspace must be an existing directory inside the workspace root %s", s.opts.WorkspaceRoot)
	pl, err := s.resolve(ws, bad)
	if err != nil || !pl.exists {
		return "", bad
	}
	if fi, err := os.Stat(pl.abs); err != nil || !fi.IsDir() {
		return "", bad
	}
	return pl.abs, nil
}

// hasControl reports whether s holds a NUL or another control character.
func hasControl(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return true
		}
	}
	return false
}

// rootMissing is the error for a workspace root that cannot be resolved:
// it names the root and how it is made.
func (s *Service) rootMissing(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return invalid("the workspace root %s does not exist: aos up creates it, or create it yourself (AOS_WORKSPACE_ROOT chooses another)", s.opts.WorkspaceRoot)
	}
	return invalid("the workspace root %s cannot be used: %v", s.opts.WorkspaceRoot, err)
}
