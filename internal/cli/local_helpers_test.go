package cli

import (
	"io"
	"log/slog"
	"os/exec"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/store/storetest"
)

// localSession returns a session of the local commands (aos run, resume,
// waits) over db, writing to out, with env as its environment and its own
// data dir and workspace root.
func localSession(t *testing.T, db storetest.DB, out io.Writer, env map[string]string) *session {
	t.Helper()
	cfg := config.Config{DataDir: t.TempDir(), WorkspaceRoot: t.TempDir()}
	return newSession(cfg, db.Store, slog.New(slog.DiscardHandler), "test", out, func(k string) string { return env[k] })
}

// gitRepo makes dir a git repository with one commit.
func gitRepo(t *testing.T, dir string) string {
	t.Helper()
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v %s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}
