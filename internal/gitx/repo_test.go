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

func TestCheckProject(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	writeFile(t, filepath.Join(repo, "sub", "f.txt"), "f\n", 0o644)
	plain := t.TempDir()
	// A subdirectory with an empty .git of its own, inside a repository:
	// discovery must not fall through to the repository above.
	writeFile(t, filepath.Join(repo, "fake", ".git", "x"), "", 0o644)
	// .git as a file (a linked worktree or submodule) and as a symlink.
	gitfile := t.TempDir()
	writeFile(t, filepath.Join(gitfile, ".git"), "gitdir: "+filepath.Join(repo, ".git")+"\n", 0o644)
	link := t.TempDir()
	if err := os.Symlink(filepath.Join(repo, ".git"), filepath.Join(link, ".git")); err != nil {
		t.Fatal(err)
	}
	bare := t.TempDir()
	rawGit(t, bare, "init", "-q", "--bare")
	cases := []struct {
		name, dir string
		ok        bool
	}{
		{"top level", repo, true},
		{"top level with trailing slash", repo + "/", true},
		{"not a repository", plain, false},
		{"subdirectory of a repository", filepath.Join(repo, "sub"), false},
		{"fake .git in a subdirectory", filepath.Join(repo, "fake"), false},
		{".git is a file", gitfile, false},
		{".git is a symlink", link, false},
		{"bare repository", bare, false},
		{"the .git directory itself", filepath.Join(repo, ".git"), false},
		{"missing", filepath.Join(plain, "nope"), false},
		{"a file", filepath.Join(repo, "a.txt"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			top, err := gitx.CheckProject(ctx, c.dir)
			if c.ok {
				if err != nil || top != repo {
					t.Fatalf("CheckProject(%s) = %q, %v; want %q", c.dir, top, err, repo)
				}
				return
			}
			if !errors.Is(err, gitx.ErrNotProject) {
				t.Fatalf("CheckProject(%s) = %q, %v; want ErrNotProject", c.dir, top, err)
			}
			if _, err := gitx.Open(ctx, c.dir); !errors.Is(err, gitx.ErrNotProject) {
				t.Fatalf("Open(%s): %v; want ErrNotProject", c.dir, err)
			}
		})
	}
}

// TestOpenRefusesConfigThatRunsPrograms sets, in the repository's own
// config, each kind of key that names a program; Open must refuse, and
// running git anyway with the hardening must not reach the trap either.
func TestOpenRefusesConfigThatRunsPrograms(t *testing.T) {
	t.Parallel()
	keys := []string{
		"filter.x.clean", "filter.x.smudge", "filter.x.process", "diff.x.textconv", "diff.x.command", "diff.external",
		"merge.x.driver", "core.sshCommand", "core.askPass", "core.editor", "core.gitProxy", "core.alternateRefsCommand",
		"credential.helper", "credential.https://example.com.helper", "gpg.program", "gpg.ssh.program",
		"remote.origin.uploadpack", "remote.origin.receivepack", "remote.origin.vcs", "uploadpack.packObjectsHook",
		"mergetool.x.cmd", "sequence.editor", "include.path", "includeIf.gitdir:/.path", "core.worktree",
	}
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			repo := newRepo(t)
			canaryPath, trap := canary(t)
			val := trap
			if strings.HasPrefix(key, "include") {
				val = filepath.Join(t.TempDir(), "harmless.cfg")
				writeFile(t, val, "[user]\n\tname = x\n", 0o644)
			}
			rawGit(t, repo, "config", key, val)
			writeFile(t, filepath.Join(repo, ".gitattributes"), "* filter=x diff=x merge=x\n", 0o644)
			writeFile(t, filepath.Join(repo, "a.txt"), "changed\n", 0o644)
			_, err := gitx.Open(ctx, repo)
			if key == "core.worktree" && errors.Is(err, gitx.ErrNotProject) {
				return // the work tree is elsewhere: not a project at all
			}
			if !errors.Is(err, gitx.ErrUnsafeConfig) {
				t.Fatalf("Open with %s set: %v; want ErrUnsafeConfig", key, err)
			}
			if !strings.Contains(err.Error(), strings.ToLower(key[:strings.IndexByte(key, '.')])) || strings.Contains(err.Error(), val) {
				t.Errorf("message should name the key and not its value: %v", err)
			}
			assertNoCanary(t, canaryPath)
		})
	}
}

// TestOverriddenKeysAndHooksDoNotRun sets the keys gitx overrides on the
// command line rather than refusing (hooks, fsmonitor, pager, attributes)
// and plants hooks in .git/hooks; status, diff, add, commit, checkout and
// branch creation must run none of them, and still work.
func TestOverriddenKeysAndHooksDoNotRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	canaryPath, trap := canary(t)
	hooks := filepath.Join(repo, ".git", "hooks")
	for _, h := range []string{"pre-commit", "commit-msg", "post-commit", "post-checkout", "reference-transaction", "pre-auto-gc", "post-index-change"} {
		writeFile(t, filepath.Join(hooks, h), "#!/bin/sh\nexec '"+trap+"' hook "+h+"\n", 0o755)
	}
	evilHooks := t.TempDir()
	writeFile(t, filepath.Join(evilHooks, "pre-commit"), "#!/bin/sh\nexec '"+trap+"' hookspath\n", 0o755)
	attrs := filepath.Join(t.TempDir(), "attributes")
	writeFile(t, attrs, "* diff=x\n", 0o644)
	for k, v := range map[string]string{
		"core.hooksPath": evilHooks, "core.fsmonitor": trap, "core.pager": trap, "pager.diff": trap,
		"core.attributesFile": attrs, "protocol.file.allow": "always", "commit.gpgSign": "true", "log.showSignature": "true",
		"user.name": "Owner", "user.email": "owner@example.com", "alias.st": "!" + trap,
	} {
		rawGit(t, repo, "config", k, v)
	}
	r, err := gitx.Open(ctx, repo)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	writeFile(t, filepath.Join(repo, "a.txt"), "changed\n", 0o644)
	for _, args := range [][]string{
		{"status", "--porcelain"}, {"diff"}, {"add", "-A"}, {"commit", "-q", "-m", "m"}, {"log", "-1", "-p"},
		{"checkout", "-q", "-b", "aos/x"}, {"checkout", "-q", "main"}, {"gc", "--auto"},
	} {
		res, err := r.Run(ctx, gitx.Cmd{Args: args})
		if err != nil || res.Code != 0 {
			t.Fatalf("git %v: %v %+v", args, err, res)
		}
	}
	assertNoCanary(t, canaryPath)
	if got := strings.TrimSpace(rawGit(t, repo, "log", "-1", "--format=%an <%ae> %s")); got != "Owner <owner@example.com> m" {
		t.Errorf("commit: %q", got)
	}
}

func TestCheckRemoteURL(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"https://github.com/o/r.git", "ssh://git@github.com/o/r", "git@github.com:o/r.git", "gh:o/r"} {
		if err := gitx.CheckRemoteURL(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "evil.com", "./evil.com", "/tmp/repo", "../r", "file:///tmp/r", "http://h/r", "ext::sh -c evil",
		"-uhelp", "git://h/r", "fd::3", "https://h", "ssh+git://h/r", "a/b:c", "@h:r", "https://h/r\n", "x:"} {
		if err := gitx.CheckRemoteURL(bad); !errors.Is(err, gitx.ErrUnsafeRemote) {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
}
