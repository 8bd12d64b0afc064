package gitx

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// DefaultIdentity is the author and committer of aos's commits in a
// repository whose config names no user (global config is never read).
var DefaultIdentity = []string{"GIT_AUTHOR_NAME=aos", "GIT_AUTHOR_EMAIL=aos@localhost",
	"GIT_COMMITTER_NAME=aos", "GIT_COMMITTER_EMAIL=aos@localhost"}

// IdentityEnv returns the environment a commit needs: none when the
// repository's config names both user.name and user.email, DefaultIdentity
// otherwise.
func (r *Repo) IdentityEnv(ctx context.Context) ([]string, error) {
	for _, k := range []string{"user.name", "user.email"} {
		res, err := r.Run(ctx, Cmd{Args: []string{"config", "--get", k}})
		if err != nil {
			return nil, err
		}
		if res.Code != 0 || strings.TrimSpace(res.Stdout) == "" {
			return DefaultIdentity, nil
		}
	}
	return nil, nil
}

// NestedRepos lists the paths (relative, slash-separated) of the
// repositories inside the work tree: the index's gitlinks (submodules),
// and the untracked directories that are repositories of their own. Never
// pass them to `git add`: it would record an untracked one as a gitlink,
// and for a gitlink it runs `git status` inside it, under that repository's
// config, which a sandboxed command can write.
func (r *Repo) NestedRepos(ctx context.Context) ([]string, error) {
	var out []string
	res, err := r.Run(ctx, Cmd{Args: []string{"ls-files", "--stage", "-z"}})
	if err != nil {
		return nil, err
	}
	if res.Code != 0 {
		return nil, fmt.Errorf("gitx: list the index: %s", FirstLine(res.Combined))
	}
	for _, e := range strings.Split(res.Stdout, "\x00") {
		if meta, path, ok := strings.Cut(e, "\t"); ok && strings.HasPrefix(meta, "160000 ") {
			out = append(out, path)
		}
	}
	res, err = r.Run(ctx, Cmd{Args: []string{"status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=all"}})
	if err != nil {
		return nil, err
	}
	if res.Code != 0 {
		return nil, fmt.Errorf("gitx: list untracked files: %s", FirstLine(res.Combined))
	}
	for _, e := range strings.Split(res.Stdout, "\x00") {
		p, ok := strings.CutPrefix(e, "?? ")
		if !ok || !strings.HasSuffix(p, "/") {
			continue
		}
		p = strings.TrimSuffix(p, "/")
		if _, err := os.Lstat(filepath.Join(r.dir, filepath.FromSlash(p), ".git")); err == nil {
			out = append(out, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("gitx: inspect %s: %w", p, err)
		}
	}
	return out, nil
}

// PushURLs returns the URLs a push to the configured remote name goes to,
// after git's own rewriting, each checked with CheckRemoteURL. A name that
// is not a configured remote is refused (git would take it for a URL or a
// path).
func (r *Repo) PushURLs(ctx context.Context, name string) ([]string, error) {
	if name == "" || strings.HasPrefix(name, "-") {
		return nil, refuse(CodeUnsafeRemote, "remote name %q is not allowed", printable(name))
	}
	res, err := r.Run(ctx, Cmd{Args: []string{"remote", "get-url", "--push", "--all", name}})
	if err != nil {
		return nil, err
	}
	if res.Code != 0 {
		return nil, refuse(CodeUnsafeRemote, "%q is not a configured remote of this repository", printable(name))
	}
	urls := strings.Fields(res.Stdout)
	if len(urls) == 0 {
		return nil, refuse(CodeUnsafeRemote, "remote %q has no URL", printable(name))
	}
	for _, u := range urls {
		var ge *Error
		if err := CheckRemoteURL(u); errors.As(err, &ge) {
			return nil, refuse(CodeUnsafeRemote, "remote %q: %s", printable(name), ge.Msg)
		}
	}
	return urls, nil
}

// CheckRemoteURL accepts https://host/path, ssh://host/path and scp-like
// [user@]host:path. Everything else is refused: local paths and file://
// (git would run the hooks of a repository on this disk, which a model may
// have made), ext:: and other transports. A host-like name without a colon
// ("evil.com") is a local path to git, so it is refused too. The message
// never repeats the URL.
func CheckRemoteURL(raw string) error {
	bad := func(why string) error {
		return refuse(CodeUnsafeRemote, "URL %s; only https://host/path, ssh://host/path and user@host:path are allowed", why)
	}
	switch {
	case raw == "":
		return bad("is empty")
	case strings.HasPrefix(raw, "-"):
		return bad("starts with \"-\"")
	case strings.ContainsAny(raw, " \t\\") || printable(raw) != raw:
		return bad("contains spaces, backslashes or control characters")
	case strings.Contains(raw, "::"):
		return bad("names a remote helper (\"::\")")
	}
	if scheme, _, ok := strings.Cut(raw, "://"); ok {
		if scheme != "https" && scheme != "ssh" {
			return bad("has a scheme that is not https or ssh")
		}
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" || !validHost(u.Hostname()) || strings.Trim(u.Path, "/") == "" {
			return bad("is not a valid URL with a host and a path")
		}
		return nil
	}
	// scp-like: a colon before any slash.
	colon, slash := strings.IndexByte(raw, ':'), strings.IndexByte(raw, '/')
	if colon < 0 || (slash >= 0 && slash < colon) {
		return bad("is a local path")
	}
	host := raw[:colon]
	if at := strings.LastIndexByte(host, '@'); at >= 0 {
		if at == 0 {
			return bad("has an empty user name")
		}
		host = host[at+1:]
	}
	if !validHost(host) || raw[colon+1:] == "" {
		return bad("is not of the form user@host:path")
	}
	return nil
}

// validHost accepts DNS names and IP literals' characters, never a leading
// "-" or ".".
func validHost(h string) bool {
	if h == "" || len(h) > 253 || h[0] == '-' || h[0] == '.' {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == ':' || r == '[' || r == ']') {
			return false
		}
	}
	return true
}

// ExcludeTempFiles is the pathspec that keeps the temp files of aos's
// atomic writes (".aos-write-*", see internal/tool) out of everything aos
// stages. A crash between creating one and renaming it over its target
// leaves it in the work tree (in a linked worktree, where .git is a file,
// they are made next to their target), and it must never be committed.
const ExcludeTempFiles = ":(exclude,glob)**/.aos-write-*"
