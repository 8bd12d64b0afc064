package gitx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Repo is a project repository that passed CheckProject and whose config
// names no program. Its .git is read-only to sandboxed commands, so the
// check holds for the Repo's lifetime; open a new Repo per tool call.
type Repo struct {
	dir string
}

// Dir is the work tree's top level, symbolic links resolved.
func (r *Repo) Dir() string { return r.dir }

// Open checks dir with CheckProject, then reads the repository's effective
// config (which runs nothing) and refuses one that names a program git
// could run (see unsafeKey).
func Open(ctx context.Context, dir string) (*Repo, error) {
	top, err := CheckProject(ctx, dir)
	if err != nil {
		return nil, err
	}
	return openChecked(ctx, top)
}

// openChecked audits the config of a checked work tree's top level.
func openChecked(ctx context.Context, top string) (*Repo, error) {
	res, err := Run(ctx, Cmd{Dir: top, Args: []string{"config", "--list", "--show-scope", "--show-origin", "-z"}})
	if err != nil {
		return nil, fmt.Errorf("gitx: read the config of %s: %w", top, err)
	}
	if res.Code != 0 {
		return nil, refuse(CodeUnsafeConfig, "cannot read the git config of %s: %s", top, FirstLine(res.Combined))
	}
	if bad := unsafeConfig(res.Stdout); len(bad) > 0 {
		return nil, refuse(CodeUnsafeConfig,
			"the git config of %s sets %s, which can make git run a program on the host; aos runs no git there until the owner removes it (git config --unset KEY)",
			top, strings.Join(bad, ", "))
	}
	return &Repo{dir: top}, nil
}

// Run runs git in the repository's top level.
func (r *Repo) Run(ctx context.Context, c Cmd) (Result, error) {
	c.Dir = r.dir
	return Run(ctx, c)
}

// CheckProject verifies that dir is the top level of a git work tree whose
// .git is a real directory (not a file, not a symbolic link), and returns
// dir with its symbolic links resolved. A directory that is not a
// repository, or is a subdirectory of one, is refused: a sandboxed command
// could create .git there and host git would then read it.
func CheckProject(ctx context.Context, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return "", &Error{Code: CodeNotProject, Msg: fmt.Sprintf("project %s cannot be resolved", dir), Err: err}
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return "", refuse(CodeNotProject, "project %s is not a directory", abs)
	}
	fi, err := os.Lstat(filepath.Join(abs, ".git"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", refuse(CodeNotProject, "project %s is not the top level of a git repository (it has no .git directory); run `git init` there first", abs)
	case err != nil:
		return "", &Error{Code: CodeNotProject, Msg: fmt.Sprintf("project %s: cannot inspect .git", abs), Err: err}
	case fi.Mode()&fs.ModeSymlink != 0 || !fi.IsDir():
		return "", refuse(CodeNotProject, "project %s: .git must be a directory, not a file or a symbolic link (linked worktrees and submodules are not projects)", abs)
	}
	// The ceiling stops discovery at abs: a broken .git is not papered over
	// by a repository above it.
	res, err := Run(ctx, Cmd{Dir: abs, Args: []string{"rev-parse", "--is-bare-repository", "--show-toplevel", "--absolute-git-dir"},
		Env: []string{"GIT_CEILING_DIRECTORIES=" + filepath.Dir(abs)}})
	if err != nil {
		return "", fmt.Errorf("gitx: inspect %s: %w", abs, err)
	}
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if res.Code != 0 || len(lines) != 3 || lines[0] != "false" {
		return "", refuse(CodeNotProject, "project %s: .git is not a valid repository of a work tree: %s", abs, FirstLine(res.Combined))
	}
	if lines[1] != abs || lines[2] != filepath.Join(abs, ".git") {
		return "", refuse(CodeNotProject, "project %s is not the top level of its git work tree", abs)
	}
	return abs, nil
}

// unsafeConfig returns the keys of a `git config --list --show-scope
// --show-origin -z` listing that name a program or pull in more config,
// with where each was set. Command-line entries are gitx's own.
func unsafeConfig(listing string) []string {
	var bad []string
	fields := strings.Split(listing, "\x00")
	for i := 0; i+2 < len(fields); i += 3 {
		scope, origin, kv := fields[i], fields[i+1], fields[i+2]
		if scope == "command" {
			continue
		}
		key, val, _ := strings.Cut(kv, "\n")
		if unsafeKey(key, val) {
			bad = append(bad, printable(key)+" ("+printable(origin)+")")
		}
	}
	return bad
}

// programSuffixes end the names of config variables whose value is a
// program or a command line git may run: diff.<d>.command, core.sshCommand,
// core.alternateRefsCommand, mergetool.<t>.cmd, gpg.program,
// credential.helper, merge.<d>.driver, diff.<d>.textconv, core.askPass,
// core.editor, core.gitProxy, remote.<r>.uploadpack/receivepack/vcs,
// uploadpack.packObjectsHook. (filter.* is refused as a whole.)
var programSuffixes = []string{"command", "cmd", "program", "helper", "driver", "textconv", "askpass",
	"editor", "gitproxy", "uploadpack", "receivepack", "vcs", "hook"}

// unsafeKey reports whether a config key (as git lists it: section and
// variable lower-cased) can make git run a program or read more config.
// Keys that Hardening overrides on the command line (core.hooksPath,
// core.fsmonitor, core.pager, protocol.*) are not refused: the override wins.
func unsafeKey(key, val string) bool {
	section, rest, _ := strings.Cut(key, ".")
	variable := rest
	if i := strings.LastIndex(rest, "."); i >= 0 {
		variable = rest[i+1:]
	}
	switch section {
	case "filter", "include", "includeif":
		return true
	case "diff":
		if variable == "external" {
			return true
		}
	case "core":
		if variable == "worktree" {
			return true // moves the work tree out of the project
		}
	case "submodule":
		return variable == "update" && strings.HasPrefix(strings.TrimSpace(val), "!")
	}
	for _, s := range programSuffixes {
		if strings.HasSuffix(variable, s) {
			return true
		}
	}
	return false
}

// printable replaces control characters so a message cannot carry escapes.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, s)
}

// FirstLine is the first line of git's (or another program's) output, at
// most 200 bytes, with control characters shown as '?': fit for an error
// message that may reach a terminal or a device.
func FirstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if len(l) > 200 {
		l = l[:200]
	}
	return printable(l)
}
