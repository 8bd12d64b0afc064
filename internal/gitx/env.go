package gitx

import (
	"strings"
)

// passThrough are the worker's variables git may see: the search path, and
// the ssh agent's socket so that a push or clone over ssh can use the
// owner's keys (ssh reads the owner's ~/.ssh from the password database,
// not from HOME).
var passThrough = []string{"PATH", "SSH_AUTH_SOCK"}

// extraAllowed are the variables a caller may add: a commit's identity, a
// CA for https (tests trust their own server with it), ceiling directories
// and a temporary index file.
var extraAllowed = map[string]bool{
	"GIT_AUTHOR_NAME": true, "GIT_AUTHOR_EMAIL": true, "GIT_AUTHOR_DATE": true,
	"GIT_COMMITTER_NAME": true, "GIT_COMMITTER_EMAIL": true, "GIT_COMMITTER_DATE": true,
	"GIT_SSL_CAINFO": true, "GIT_SSL_CAPATH": true,
	"GIT_CEILING_DIRECTORIES": true,
	// A temporary index, so that a snapshot never touches the owner's.
	"GIT_INDEX_FILE": true,
}

// Env returns the environment of a git process, built from scratch:
// getenv is consulted only for passThrough, home is an empty directory of
// aos's own, and extra may only hold the variables in extraAllowed. No
// other GIT_* variable, no provider key and nothing else of the worker's
// environment reaches git.
func Env(getenv func(string) string, home string, extra []string) ([]string, error) {
	env := []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + home + "/.config",
		"LC_ALL=C",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_SYSTEM=/dev/null",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_PROTOCOL_FROM_USER=0",
		"GIT_SSH_COMMAND=ssh -o BatchMode=yes",
		"GIT_SSH_VARIANT=ssh",
	}
	for _, k := range passThrough {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	for _, kv := range extra {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || !extraAllowed[k] || strings.ContainsRune(kv, 0) {
			return nil, refuse(CodeBadEnv, "environment variable %q is not one a caller may give git", k)
		}
		env = append(env, kv)
	}
	return env, nil
}
