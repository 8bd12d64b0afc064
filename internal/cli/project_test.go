package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

// gitRepo makes a git repository with one commit under the workspace root.
func (r *remote) gitRepo(rel string) string {
	r.t.Helper()
	dir := r.workspace(rel)
	for _, args := range [][]string{
		{"init", "-q"},
		{"-c", "user.name=t", "-c", "user.email=t@t.invalid", "-c", "commit.gpgSign=false", "commit", "-q", "--allow-empty", "-m", "first"},
	} {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+r.t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil {
			r.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// TestProjectCommands runs aos project against the real server: add an
// existing repository, --init a new one, a refused --clone, ls (human and
// JSON), rename and rm (which leaves the directory).
func TestProjectCommands(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		r := setupRemote(t, db)
		app := r.gitRepo("repos/app")

		out := r.ok("project", "add", "repos/app")
		if !strings.Contains(out, "app (existing, "+app+")") {
			t.Fatalf("add existing: %s", out)
		}
		var fresh mission.Project
		r.okJSON(&fresh, "project", "add", "fresh", "--init", "--name", "Fresh")
		if fresh.Name != "Fresh" || fresh.Mode != mission.ProjectInit || fresh.Path != "fresh" {
			t.Fatalf("add --init: %+v", fresh)
		}
		if _, err := os.Stat(filepath.Join(r.root, "fresh", ".git")); err != nil {
			t.Fatalf("--init made no repository: %v", err)
		}

		refused := []struct {
			name string
			args []string
			want string
		}{
			{"clone of a file URL", []string{"project", "add", "lib", "--clone", "file:///etc"}, "use https://host/path, ssh://host/path or git@host:path"},
			{"clone with an ext:: transport", []string{"project", "add", "lib", "--clone", "ext::git-x"}, "use https://host/path, ssh://host/path or git@host:path"},
			{"clone from this machine", []string{"project", "add", "lib", "--clone", "https://127.0.0.1/x.git"}, "points at this machine or a private network"},
			{"--init with --clone", []string{"project", "add", "x", "--init", "--clone", "https://example.com/x.git"}, "init"},
			{"existing path that is no repository", []string{"project", "add", "nothing-here"}, ""},
		}
		for _, tc := range refused {
			out, errOut, code := r.aos(tc.args...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Fatalf("%s: exit %d, want %d with %q\n%s%s", tc.name, code, exitUsage, tc.want, out, errOut)
			}
		}
		if _, err := os.Stat(filepath.Join(r.root, "lib")); !os.IsNotExist(err) {
			t.Fatalf("a refused clone left a directory: %v", err)
		}

		out = r.ok("project", "ls")
		rows := strings.Split(strings.TrimSpace(out), "\n")
		if len(rows) != 3 || !strings.HasPrefix(rows[0], "ID") || !strings.Contains(out, "Fresh") || !strings.Contains(out, app) ||
			!strings.Contains(out, fresh.ID) {
			t.Fatalf("ls (full ids, which --project takes):\n%s", out)
		}
		// A mission on a project named by a unique prefix of its id; the
		// mission list filters by a prefix too.
		var m mission.Mission
		r.okJSON(&m, "mission", "create", "on a project", "--project", fresh.ID[:8], "--model", "claude-opus-5-5")
		if m.ProjectID != fresh.ID {
			t.Fatalf("mission project %q, want %q", m.ProjectID, fresh.ID)
		}
		var ms []mission.Mission
		r.okJSON(&ms, "mission", "ls", "--project", fresh.ID[:8])
		if len(ms) != 1 || ms[0].ID != m.ID {
			t.Fatalf("mission ls --project prefix: %+v", ms)
		}
		if _, errOut, code := r.aos("mission", "create", "x", "--project", "prj_nope"); code != exitNotFound {
			t.Fatalf("unknown project prefix: exit %d %s", code, errOut)
		}
		var ps []mission.Project
		r.okJSON(&ps, "project", "ls")
		if len(ps) != 2 {
			t.Fatalf("ls --json: %+v", ps)
		}

		var renamed mission.Project
		r.okJSON(&renamed, "project", "rename", short(fresh.ID), "Fresher")
		if renamed.ID != fresh.ID || renamed.Name != "Fresher" || renamed.Dir != fresh.Dir {
			t.Fatalf("rename: %+v", renamed)
		}
		out = r.ok("project", "rm", fresh.ID)
		if !strings.Contains(out, "unregistered") || !strings.Contains(out, "left as it is") {
			t.Fatalf("rm: %s", out)
		}
		if _, err := os.Stat(filepath.Join(fresh.Dir, ".git")); err != nil {
			t.Fatalf("rm touched the directory: %v", err)
		}
		r.okJSON(&ps, "project", "ls")
		if len(ps) != 1 || ps[0].Name != "app" {
			t.Fatalf("ls after rm: %+v", ps)
		}
		if _, errOut, code := r.aos("project", "rm", fresh.ID); code != exitNotFound {
			t.Fatalf("rm again: exit %d %s", code, errOut)
		}
	})
}
