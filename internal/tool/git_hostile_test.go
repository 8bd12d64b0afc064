package tool_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/tool"
)

// trap returns a canary path outside the workspace and a script that
// appends to it (with its environment) when git runs it.
func trap(t *testing.T) (canary, script string) {
	t.Helper()
	dir := t.TempDir()
	canary = filepath.Join(dir, "canary")
	script = filepath.Join(dir, "trap.sh")
	write(t, script, "#!/bin/sh\necho ran \"$0\" \"$@\" >> '"+canary+"'\nenv >> '"+canary+"'\ncat\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	return canary, script
}

func assertNoCanary(t *testing.T, canary string) {
	t.Helper()
	if b, err := os.ReadFile(canary); err == nil {
		first, _, _ := strings.Cut(string(b), "\n")
		t.Fatalf("a repository-controlled program ran on the host: %s", first)
	}
}

// nestedTrap makes sub/ a repository of its own whose config defines a
// clean filter running script for every file, with one committed and
// then modified file: what a sandboxed command can build with git init.
// With gitlink, the outer repository records sub first.
func nestedTrap(t *testing.T, ws, script string, gitlink bool) {
	t.Helper()
	sub := filepath.Join(ws, "sub")
	git(t, ws, "init", "-q", "sub")
	write(t, filepath.Join(sub, ".gitattributes"), "* filter=x diff=x\n")
	write(t, filepath.Join(sub, "f.txt"), "f\n")
	git(t, sub, "add", "-A")
	git(t, sub, "commit", "-q", "-m", "nested")
	if gitlink {
		// The owner (or an old aos) recorded sub as a gitlink.
		git(t, ws, "add", "sub")
		git(t, ws, "commit", "-q", "-m", "gitlink")
	}
	git(t, sub, "config", "filter.x.clean", script)
	git(t, sub, "config", "filter.x.required", "true")
	git(t, sub, "config", "diff.x.textconv", script)
	write(t, filepath.Join(sub, "f.txt"), "modified\n")
}

// TestGitToolsNeverEnterNestedRepos: a repository inside the project is
// neither entered (its filters never run) nor staged as a gitlink, whether
// it is untracked or was recorded as a gitlink before.
func TestGitToolsNeverEnterNestedRepos(t *testing.T) {
	t.Parallel()
	for _, tracked := range []bool{false, true} {
		name := "untracked"
		if tracked {
			name = "recorded as a gitlink"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tc := newRepo(t)
			canary, script := trap(t)
			nestedTrap(t, tc.Workspace, script, tracked)
			write(t, filepath.Join(tc.Workspace, "a.txt"), "changed\n")
			st := run(t, tool.GitStatus(), tc, `{}`)
			if !st.OK || !strings.Contains(st.Output, "a.txt") {
				t.Fatalf("status: %+v", st)
			}
			if d := run(t, tool.GitDiff(), tc, `{"path":null,"staged":null}`); !d.OK || !strings.Contains(d.Diff, "+changed") {
				t.Fatalf("diff: %+v", d)
			}
			c := run(t, tool.GitCommit(), tc, `{"message":"all","paths":null}`)
			if !c.OK || !strings.HasPrefix(c.Output, "committed ") {
				t.Fatalf("commit: %+v", c)
			}
			if !tracked && !strings.Contains(c.Output, "not staged") {
				t.Errorf("commit does not tell the model it skipped sub: %s", c.Output)
			}
			if d := run(t, tool.GitDiff(), tc, `{"path":"sub","staged":true}`); !d.OK {
				t.Fatalf("diff sub: %+v", d)
			}
			if c := run(t, tool.GitCommit(), tc, `{"message":"sub","paths":["sub"]}`); !c.OK {
				t.Fatalf("commit sub: %+v", c)
			}
			assertNoCanary(t, canary)
			tree := git(t, tc.Workspace, "ls-tree", "-r", "HEAD")
			if !tracked && strings.Contains(tree, "sub") {
				t.Errorf("the nested repository was committed:\n%s", tree)
			}
		})
	}
}

// TestGitToolsRefuseHostileRepos: a workspace that is not a project's top
// level, or whose own config names a program, gets no git at all; hooks
// planted in .git/hooks never run. Each case asserts from outside that the
// trap did not run.
func TestGitToolsRefuseHostileRepos(t *testing.T) {
	t.Parallel()
	plant := func(t *testing.T, ws, script string) {
		t.Helper()
		write(t, filepath.Join(ws, ".gitattributes"), "* filter=x diff=x\n")
		write(t, filepath.Join(ws, "a.txt"), "changed\n")
		for _, h := range []string{"pre-commit", "post-commit", "post-checkout", "reference-transaction"} {
			p := filepath.Join(ws, ".git", "hooks", h)
			write(t, p, "#!/bin/sh\nexec '"+script+"' hook\n")
			if err := os.Chmod(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, tc *tool.Context, script string)
		want  string
	}{
		{"model-made .git in a plain directory with a filter", func(t *testing.T, tc *tool.Context, script string) {
			git(t, tc.Workspace, "init", "-q")
			git(t, tc.Workspace, "config", "filter.x.clean", script)
			plant(t, tc.Workspace, script)
		}, "filter.x.clean"},
		{"worktree config: textconv", func(t *testing.T, tc *tool.Context, script string) {
			git(t, tc.Workspace, "init", "-q", "-b", "main")
			git(t, tc.Workspace, "config", "diff.x.textconv", script)
			plant(t, tc.Workspace, script)
		}, "diff.x.textconv"},
		{"subdirectory of a repository", func(t *testing.T, tc *tool.Context, script string) {
			git(t, tc.Workspace, "init", "-q", "-b", "main")
			plant(t, tc.Workspace, script)
			git(t, tc.Workspace, "config", "filter.x.clean", script)
			write(t, filepath.Join(tc.Workspace, "sub", "b.txt"), "b\n")
			tc.Workspace = filepath.Join(tc.Workspace, "sub")
		}, "not the top level"},
		{"no repository", func(t *testing.T, tc *tool.Context, script string) {}, "not the top level"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := newTC(t)
			canary, script := trap(t)
			c.setup(t, tc, script)
			for _, call := range []struct {
				tl tool.Tool
				in string
			}{
				{tool.GitStatus(), `{}`},
				{tool.GitDiff(), `{"path":null,"staged":null}`},
				{tool.GitCommit(), `{"message":"m","paths":null}`},
				{tool.GitPush(), `{"remote":null,"branch":"main"}`},
			} {
				res := run(t, call.tl, tc, call.in)
				if res.OK || !strings.Contains(res.Output, c.want) {
					t.Errorf("%s: %+v; want a refusal naming %q", call.tl.Name(), res, c.want)
				}
			}
			assertNoCanary(t, canary)
		})
	}
}

// TestGitPushOnlyOverHTTPSAndSSH: a remote that git would resolve to a
// repository on this disk (a path, file://, a host-like name without a
// colon) is refused, and the pre-receive hook of that repository, which a
// model could have made, never runs.
func TestGitPushOnlyOverHTTPSAndSSH(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, url, remote string
	}{
		{"absolute path", "BARE", "origin"},
		{"file URL", "file://BARE", "origin"},
		{"host-like name", "evil.com", "origin"},
		{"unconfigured host-like remote name", "", "evil.com"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tc := newRepo(t)
			canary, script := trap(t)
			bare := filepath.Join(tc.Workspace, "evil.com")
			git(t, tc.Workspace, "init", "-q", "--bare", "evil.com")
			hook := filepath.Join(bare, "hooks", "pre-receive")
			write(t, hook, "#!/bin/sh\nexec '"+script+"' pre-receive\n")
			if err := os.Chmod(hook, 0o755); err != nil {
				t.Fatal(err)
			}
			if c.url != "" {
				git(t, tc.Workspace, "remote", "add", "origin", strings.ReplaceAll(c.url, "BARE", bare))
			}
			res := run(t, tool.GitPush(), tc, `{"remote":"`+c.remote+`","branch":"main"}`)
			if res.OK {
				t.Errorf("push to %s succeeded: %s", c.name, res.Output)
			}
			assertNoCanary(t, canary)
			if _, err := os.Stat(filepath.Join(bare, "refs", "heads", "main")); err == nil {
				t.Error("the local repository received the push")
			}
		})
	}
}
