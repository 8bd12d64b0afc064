package gitx_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/gitx"
)

func TestEnvIsBuiltFromScratch(t *testing.T) {
	t.Parallel()
	worker := map[string]string{
		"PATH": "/usr/bin:/bin", "SSH_AUTH_SOCK": "/run/agent.sock", "HOME": "/home/owner",
		"ANTHROPIC_API_KEY": "sk-canary", "OPENAI_API_KEY": "sk-canary", "GIT_DIR": "/elsewhere",
		"GIT_CONFIG_PARAMETERS": "'filter.x.clean'='evil'", "GIT_EXTERNAL_DIFF": "/tmp/evil", "GIT_CONFIG_GLOBAL": "/home/owner/.gitconfig",
		"GIT_SSH_COMMAND": "evil", "LD_PRELOAD": "/tmp/evil.so", "XDG_CONFIG_HOME": "/home/owner/.config",
	}
	env, err := gitx.Env(func(k string) string { return worker[k] }, "/tmp/aos-home", []string{"GIT_AUTHOR_NAME=aos"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := got[k]; dup {
			t.Errorf("%s set twice", k)
		}
		got[k] = v
	}
	want := map[string]string{
		"PATH": "/usr/bin:/bin", "SSH_AUTH_SOCK": "/run/agent.sock", "HOME": "/tmp/aos-home", "LC_ALL": "C",
		"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_ATTR_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
		"GIT_OPTIONAL_LOCKS": "0", "GIT_SSH_COMMAND": "ssh -o BatchMode=yes", "GIT_AUTHOR_NAME": "aos",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	for _, k := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GIT_DIR", "GIT_CONFIG_PARAMETERS", "GIT_EXTERNAL_DIFF", "LD_PRELOAD"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s reached git's environment", k)
		}
	}
	for _, kv := range env {
		if strings.Contains(kv, "canary") || strings.Contains(kv, "owner") || strings.Contains(kv, "evil") {
			t.Errorf("worker value reached git: %s", kv)
		}
	}
	for _, bad := range []string{"GIT_DIR=/x", "GIT_CONFIG_GLOBAL=/x", "HOME=/x", "ANTHROPIC_API_KEY=x", "GIT_EXTERNAL_DIFF=x", "novalue"} {
		if _, err := gitx.Env(func(string) string { return "" }, "/h", []string{bad}); !errors.Is(err, gitx.ErrBadEnv) {
			t.Errorf("extra %q: %v, want ErrBadEnv", bad, err)
		}
	}
}

// TestGitSeesNoWorkerEnv plants secrets and GIT_* variables in this
// process's environment and reads the environment a real git gives the
// programs it starts (a trusted alias, the only program the test asks for).
func TestGitSeesNoWorkerEnv(t *testing.T) {
	repo := newRepo(t)
	canaryPath, trap := canary(t)
	// GIT_DIR points at a repository whose config runs the trap.
	other := newRepo(t)
	rawGit(t, other, "config", "filter.y.clean", trap)
	hostile := map[string]string{
		"ANTHROPIC_API_KEY":     "sk-ant-canary",
		"OPENAI_API_KEY":        "sk-canary",
		"AOS_TOKEN":             "aos-canary",
		"GIT_CONFIG_PARAMETERS": "'filter.x.clean'='" + trap + "' 'filter.x.required'='true'",
		"GIT_EXTERNAL_DIFF":     trap,
		"GIT_DIR":               other + "/.git",
		"GIT_CONFIG_GLOBAL":     t.TempDir() + "/owner.gitconfig",
	}
	for k, v := range hostile {
		t.Setenv(k, v) // gitx.Run scrubs the process environment a real git would inherit; that is what is tested
	}
	home, _ := os.UserHomeDir()
	writeFile(t, repo+"/.gitattributes", "a.txt filter=x\n*.txt filter=y\n", 0o644)
	writeFile(t, repo+"/a.txt", "changed\n", 0o644)
	ctx := context.Background()
	for _, args := range [][]string{{"status", "--porcelain"}, {"diff"}, {"add", "-A"}} {
		r, err := gitx.Run(ctx, gitx.Cmd{Dir: repo, Args: args})
		if err != nil || r.Code != 0 {
			t.Errorf("git %v: %v %+v", args, err, r)
		}
	}
	assertNoCanary(t, canaryPath)
	r, err := gitx.Run(ctx, gitx.Cmd{Dir: repo, Args: []string{"-c", "alias.dumpenv=!env", "dumpenv"}})
	if err != nil || r.Code != 0 {
		t.Fatalf("dump env: %v %+v", err, r)
	}
	for k, v := range hostile {
		if strings.Contains(r.Stdout, v) {
			t.Errorf("%s from the worker reached git's children", k)
		}
	}
	for _, line := range strings.Split(r.Stdout, "\n") {
		if v, ok := strings.CutPrefix(line, "HOME="); ok && (v == home || v == "") {
			t.Errorf("git ran with the owner's HOME %q", v)
		}
	}
	if !strings.Contains(r.Stdout, "GIT_CONFIG_GLOBAL=/dev/null") {
		t.Errorf("git did not get GIT_CONFIG_GLOBAL=/dev/null:\n%s", r.Stdout)
	}
}
