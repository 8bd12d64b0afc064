package mission

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/aos-run/aos/internal/gitx"
)

// DefaultCloneTimeout bounds a project clone unless Options.CloneTimeout
// says otherwise.
const DefaultCloneTimeout = 10 * time.Minute

// runGit runs git through gitx, the one hardened runner of host git
// (minimal environment, no hooks, https and ssh only, own process group),
// with the service's extra environment (Options.GitEnv), and returns its
// trimmed combined output; a non-zero exit is an error.
func (s *Service) runGit(ctx context.Context, c gitx.Cmd) (string, error) {
	c.Env = append(append([]string(nil), c.Env...), s.opts.GitEnv...)
	r, err := gitx.Run(ctx, c)
	out := strings.TrimSpace(r.Combined)
	if err == nil && r.Code != 0 {
		err = fmt.Errorf("git exited with status %d", r.Code)
	}
	return out, err
}

// gitFailure is the error of a failed git command: its first fatal line
// (or its last line),
// stripped of control characters and bounded, so the owner sees why
// (authentication refused, repository not found) without an unbounded echo.
// The clone URL was checked to hold no credential before git ran.
func gitFailure(doing string, out string, err error) error {
	lines := strings.Split(out, "\n")
	line := lines[len(lines)-1]
	for _, l := range lines {
		if strings.HasPrefix(l, "fatal:") {
			line = l
			break
		}
	}
	line = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, line)
	if r := []rune(line); len(r) > 200 {
		line = string(r[:200]) + "…"
	}
	msg := doing + " failed"
	if line != "" {
		msg += ": " + line
	}
	return &Error{Code: CodeGitFailed, Msg: msg, Err: fmt.Errorf("%s: %w", doing, err)}
}

// CheckCloneURL accepts the clone URLs aos fetches from: https://host/path,
// ssh://[user@]host[:port]/path and scp-like git@host:path. Everything else
// is refused: http (no integrity), file and local paths (they read the
// server's own disk), ext:: and other transports (they run commands),
// anything that git could take for an option (a leading "-"), embedded
// credentials (they would be stored and shown), and control characters or
// spaces. The error never repeats the URL.
func CheckCloneURL(raw string) error {
	bad := func(why string) error {
		return invalid("clone URL %s; use https://host/path, ssh://host/path or git@host:path", why)
	}
	switch {
	case raw == "":
		return bad("is required")
	case len(raw) > 2048:
		return bad("is longer than 2048 bytes")
	case hasControl(raw) || strings.ContainsAny(raw, " \t\\"):
		return bad("must not contain spaces, backslashes or control characters")
	case strings.HasPrefix(raw, "-"):
		return bad("must not start with \"-\"")
	case strings.Contains(raw, "::"):
		return bad("must not name a remote helper (\"::\")")
	}
	if rest, ok := strings.CutPrefix(raw, "git@"); ok {
		host, path, ok := strings.Cut(rest, ":")
		if !ok || !validHost(host) || path == "" || strings.HasPrefix(path, "-") {
			return bad("is not of the form git@host:path")
		}
		return nil
	}
	if !strings.HasPrefix(raw, "https://") && !strings.HasPrefix(raw, "ssh://") {
		return bad("has a scheme or form that is not allowed")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || !validHost(u.Hostname()) {
		return bad("is not a valid URL")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return bad("must not have a query or a fragment")
	}
	if strings.Trim(u.Path, "/") == "" {
		return bad("must name a repository path")
	}
	if u.User != nil {
		_, hasPassword := u.User.Password()
		if u.Scheme == "https" || hasPassword {
			return bad("must not embed credentials (configure a git credential helper or an ssh key instead)")
		}
		if name := u.User.Username(); name == "" || strings.HasPrefix(name, "-") {
			return bad("has an invalid user name")
		}
	}
	return nil
}

// validHost accepts DNS names and IPv4/IPv6 literals' characters, never a
// leading "-" or ".".
func validHost(h string) bool {
	if h == "" || len(h) > 253 || h[0] == '-' || h[0] == '.' {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == ':') {
			return false
		}
	}
	return true
}
