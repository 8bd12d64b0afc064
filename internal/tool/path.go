package tool

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// PathError reports a path a file tool refuses. Its message is meant for
// the model.
type PathError struct {
	Path   string
	Reason string
}

// Error implements error.
func (e *PathError) Error() string { return fmt.Sprintf("path %q: %s", e.Path, e.Reason) }

// Resolved is a path resolved inside the workspace.
type Resolved struct {
	// Abs is the real absolute path (symlinks in existing parts resolved).
	Abs string
	// Rel is Abs relative to the workspace, slash-separated ("." for the
	// workspace itself).
	Rel string
}

// ResolvePath resolves p (relative to workspace, or absolute inside it)
// using the real path of its deepest existing ancestor. It checks a name
// only: the file tools do not open what it returns (a concurrent rename
// could change where it leads) but go through wsfs.go. It refuses empty
// paths, NUL bytes, ".." escapes, absolute paths outside the workspace,
// dangling symlinks and symlinks that lead outside. workspace must be an
// absolute path.
func ResolvePath(workspace, p string) (Resolved, error) {
	if p == "" {
		return Resolved{}, &PathError{Path: p, Reason: "empty path"}
	}
	if strings.ContainsRune(p, 0) {
		return Resolved{}, &PathError{Path: p, Reason: "contains a NUL byte"}
	}
	if !filepath.IsAbs(workspace) {
		return Resolved{}, fmt.Errorf("tool: workspace %q is not absolute", workspace)
	}
	ws, err := filepath.EvalSymlinks(workspace)
	if err != nil {
		return Resolved{}, fmt.Errorf("tool: resolve workspace: %w", err)
	}
	cand := p
	if !filepath.IsAbs(cand) {
		cand = filepath.Join(ws, cand)
	}
	cand = filepath.Clean(cand)
	if !inside(ws, cand) {
		// An absolute path may name the workspace through a symlinked
		// spelling; accept it only if it resolves inside.
		if !filepath.IsAbs(p) {
			return Resolved{}, &PathError{Path: p, Reason: "escapes the workspace"}
		}
	}
	// Walk up to the deepest existing ancestor.
	cur, rest := cand, []string{}
	for {
		_, err := os.Lstat(cur)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return Resolved{}, &PathError{Path: p, Reason: err.Error()}
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return Resolved{}, &PathError{Path: p, Reason: "no existing ancestor"}
		}
		rest = append([]string{filepath.Base(cur)}, rest...)
		cur = parent
	}
	real, err := filepath.EvalSymlinks(cur)
	if err != nil {
		return Resolved{}, &PathError{Path: p, Reason: "dangling or unreadable symlink: " + err.Error()}
	}
	final := filepath.Join(append([]string{real}, rest...)...)
	if !inside(ws, final) {
		return Resolved{}, &PathError{Path: p, Reason: "resolves outside the workspace"}
	}
	rel, err := filepath.Rel(ws, final)
	if err != nil {
		return Resolved{}, &PathError{Path: p, Reason: err.Error()}
	}
	return Resolved{Abs: final, Rel: filepath.ToSlash(rel)}, nil
}

// inside reports whether p is root or below it.
func inside(root, p string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// shellRCFiles are never writable by the file tools.
var shellRCFiles = map[string]bool{
	".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true, ".profile": true,
	".zshrc": true, ".zshenv": true, ".zprofile": true, ".zlogin": true, ".zlogout": true,
	".cshrc": true, ".tcshrc": true, ".login": true, ".kshrc": true, ".mkshrc": true, ".inputrc": true,
	"config.fish": true,
}

// Protected returns why a workspace-relative path may never be written by
// a file tool, or "" if it may. It applies whatever the policy says.
func Protected(rel string) string {
	rel = filepath.ToSlash(filepath.Clean(rel))
	if rel == "." || rel == "" {
		return "the workspace root itself cannot be written"
	}
	parts := strings.Split(rel, "/")
	for _, c := range parts {
		if strings.EqualFold(c, ".git") {
			return ".git internals change only through the git tools"
		}
	}
	if strings.EqualFold(parts[0], ".aos") {
		return ".aos/ belongs to aos"
	}
	if len(parts) == 1 && (strings.EqualFold(rel, "AGENTS.md") || strings.EqualFold(rel, "CLAUDE.md")) {
		return "project instructions (AGENTS.md, CLAUDE.md) are read-only"
	}
	if shellRCFiles[strings.ToLower(parts[len(parts)-1])] {
		return "shell rc files are read-only"
	}
	return ""
}

// writableRel turns p into a workspace-relative name a file tool may
// write, refusing protected paths. Writes follow no symlink (see wsfs.go),
// so the name checked is the name written.
func writableRel(ws, p string) (string, error) {
	rel, err := relName(ws, p)
	if err != nil {
		return "", err
	}
	if why := Protected(rel); why != "" {
		return "", &PathError{Path: p, Reason: why}
	}
	return rel, nil
}
