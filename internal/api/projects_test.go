package api_test

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

// exists reports whether path exists (as a name: a link counts).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// entries lists a directory's names, for "nothing was created" checks.
func entries(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return strings.Join(names, ",")
}

func TestProjectModes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		gs := startGitServer(t, map[string]map[string]string{"calc": {"README.md": "calc from the server\n"}})
		b := setup(t, db, setupOpts{gitEnv: gs.GitEnv})
		root, _ := filepath.EvalSymlinks(b.root)

		// init: a new directory (with missing parents) becomes a repository
		// with a HEAD.
		var ini mission.Project
		b.ok("POST", "/projects", map[string]any{"name": "New", "path": "src/new", "mode": "init"}, &ini)
		if ini.Path != "src/new" || ini.Dir != filepath.Join(root, "src/new") || ini.Mode != "init" || ini.Origin != "" || ini.ID == "" || ini.CreatedAt == 0 {
			t.Fatalf("init project %+v", ini)
		}
		if head := gitT(t, ini.Dir, "rev-parse", "--abbrev-ref", "HEAD"); strings.TrimSpace(head) != "main" {
			t.Fatalf("init HEAD = %q, want main", head)
		}
		gitT(t, ini.Dir, "rev-parse", "--verify", "HEAD^{commit}")
		// init into an existing empty directory works too; into a non-empty
		// one it does not, and leaves it alone.
		b.workspace("empty")
		b.ok("POST", "/projects", map[string]any{"name": "E", "path": "empty", "mode": "init"}, nil)
		if !exists(filepath.Join(b.root, "empty", ".git")) {
			t.Fatal("init in an empty directory made no repository")
		}
		full := b.workspace("full")
		if err := os.WriteFile(filepath.Join(full, "keep.txt"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		b.fails("POST", "/projects", map[string]any{"name": "F", "path": "full", "mode": "init"}, 409, "conflict")
		if entries(t, full) != "keep.txt" {
			t.Fatalf("a refused init changed the directory: %s", entries(t, full))
		}

		// existing: a work tree registers; a plain directory is refused
		// with a pointer to init, a missing one too.
		repo := b.workspace("repo")
		gitT(t, repo, "init", "-q")
		var ex mission.Project
		b.ok("POST", "/projects", map[string]any{"name": "Repo", "path": repo, "mode": "existing"}, &ex)
		if ex.Path != "repo" || ex.Mode != "existing" {
			t.Fatalf("existing project %+v (an absolute path inside the root is stored relative)", ex)
		}
		status, body := b.do("POST", "/projects", map[string]any{"name": "Full", "path": "full", "mode": "existing"}, b.write)
		if status != 400 || !strings.Contains(string(body), `use mode \"init\"`) {
			t.Fatalf("existing on a non-repository: %d %s", status, body)
		}
		b.fails("POST", "/projects", map[string]any{"name": "Gone", "path": "gone", "mode": "existing"}, 400, "invalid_input")
		// A subdirectory of a repository is not a project: a command could
		// create .git there, unprotected, and host git would read it.
		if err := os.MkdirAll(filepath.Join(repo, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if status, body := b.do("POST", "/projects", map[string]any{"name": "Sub", "path": "repo/sub", "mode": "existing"}, b.write); status != 400 ||
			!strings.Contains(string(body), "not the top level") {
			t.Fatalf("existing on a repository's subdirectory: %d %s", status, body)
		}
		if exists(filepath.Join(b.root, "gone")) {
			t.Fatal("a refused existing created its directory")
		}
		// Two projects never share a directory, however the path is spelt.
		b.fails("POST", "/projects", map[string]any{"name": "Again", "path": "src/../repo", "mode": "existing"}, 409, "conflict")
		b.fails("POST", "/projects", map[string]any{"name": "Again", "path": "src/new", "mode": "init"}, 409, "conflict")

		// clone over real HTTPS.
		var cl mission.Project
		url := gs.URL + "/calc.git"
		b.ok("POST", "/projects", map[string]any{"name": "Calc", "path": "clones/calc", "mode": "clone", "url": url}, &cl)
		if cl.Origin != url || cl.Mode != "clone" || cl.Path != "clones/calc" {
			t.Fatalf("clone project %+v", cl)
		}
		if got, err := os.ReadFile(filepath.Join(cl.Dir, "README.md")); err != nil || string(got) != "calc from the server\n" {
			t.Fatalf("cloned README: %q %v", got, err)
		}

		// Read, rename, unregister.
		var list []mission.Project
		b.ok("GET", "/projects", nil, &list)
		if len(list) != 4 || list[0].ID != ini.ID || list[3].ID != cl.ID {
			t.Fatalf("list %+v", list)
		}
		var got mission.Project
		b.ok("PATCH", "/projects/"+cl.ID, map[string]any{"name": "Calculator"}, &got)
		if got.Name != "Calculator" || got.Path != cl.Path || got.Origin != url {
			t.Fatalf("after PATCH %+v", got)
		}
		b.ok("GET", "/projects/"+cl.ID, nil, &got)
		if got.Name != "Calculator" {
			t.Fatalf("GET after PATCH %+v", got)
		}
		for _, bad := range []any{map[string]any{"name": ""}, map[string]any{"name": "a\nb"}, map[string]any{"name": strings.Repeat("n", 101)}} {
			b.fails("PATCH", "/projects/"+cl.ID, bad, 400, "invalid_input")
		}
		b.fails("PATCH", "/projects/"+cl.ID, `{"name":"x","path":"elsewhere"}`, 400, "invalid_json")
		b.fails("PATCH", "/projects/nope", map[string]any{"name": "x"}, 404, "not_found")
		if st, _ := b.do("DELETE", "/projects/"+cl.ID, nil, b.write); st != 204 {
			t.Fatalf("DELETE: %d", st)
		}
		if !exists(filepath.Join(cl.Dir, "README.md")) {
			t.Fatal("DELETE removed the directory; it must only unregister")
		}
		b.fails("GET", "/projects/"+cl.ID, nil, 404, "not_found")
		b.fails("DELETE", "/projects/"+cl.ID, nil, 404, "not_found")
		// Once unregistered, the directory may be registered again.
		b.ok("POST", "/projects", map[string]any{"name": "Calc again", "path": "clones/calc", "mode": "existing"}, nil)

		// Every mutation was audited.
		var audit []mission.AuditEntry
		b.ok("GET", "/system/audit", nil, &audit)
		var actions []string
		for _, a := range audit {
			if strings.HasPrefix(a.Action, "project.") {
				actions = append(actions, a.Action)
			}
			if strings.Contains(string(a.Detail), "@") {
				t.Errorf("audit detail %s", a.Detail)
			}
		}
		want := "project.create project.delete project.update project.create project.create project.create project.create"
		if strings.Join(actions, " ") != want {
			t.Fatalf("audit %q, want %q", strings.Join(actions, " "), want)
		}
	})
}

func TestCloneURLWhitelist(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		gs := startGitServer(t, map[string]map[string]string{"r": {"f": "x"}})
		b := setup(t, db, setupOpts{gitEnv: gs.GitEnv})
		local := filepath.Join(t.TempDir(), "local.git")
		gitT(t, "", "init", "-q", "--bare", local)
		host := strings.TrimPrefix(gs.URL, "https://")
		for _, url := range []string{
			"",
			"http://" + host + "/r.git", // plain HTTP
			"file://" + local,
			local, // a local path
			"../" + filepath.Base(local),
			"ext::sh -c touch% /tmp/aos-pwned",
			"ext::git-upload-pack " + local,
			"fd::3",
			"-u",
			"--upload-pack=touch /tmp/aos-pwned",
			"https://user:secret-pass@" + host + "/r.git",
			"https://ghp_secrettoken@" + host + "/r.git",
			"ssh://git:secret-pass@example.com/r.git",
			"ssh://-oProxyCommand=touch%20/tmp/aos-pwned/r.git",
			"git@-oProxyCommand=x:r.git",
			"git@example.com:-r.git",
			"git@example.com",
			"gitsrv:r.git",
			"https://" + host + "/r.git\n",
			"https://" + host + "/r.git\x00",
			"https://" + host + "/r .git",
			"https://" + host + "/r.git?x=1",
			"https://" + host + "/r.git#frag",
			"https://" + host,
			"HTTPS://" + host + "/r.git",
			"git://example.com/r.git",
			"ftp://example.com/r.git",
		} {
			status, body := b.do("POST", "/projects", map[string]any{"name": "C", "path": "c", "mode": "clone", "url": url}, b.write)
			if status != 400 {
				t.Errorf("clone %q: %d %s, want 400", url, status, body)
			}
			if strings.Contains(string(body), "secret") || strings.Contains(string(body), "pwned") {
				t.Errorf("clone %q: the refusal echoes the URL: %s", url, body)
			}
			if e := entries(t, b.root); e != "" {
				t.Fatalf("clone %q left %s in the workspace root", url, e)
			}
		}
		if exists("/tmp/aos-pwned") {
			t.Fatal("a refused URL ran a command")
		}
		// url only goes with clone.
		b.fails("POST", "/projects", map[string]any{"name": "C", "path": "c", "mode": "init", "url": gs.URL + "/r.git"}, 400, "invalid_input")
		// The positive control: the same server, whitelisted form.
		b.ok("POST", "/projects", map[string]any{"name": "C", "path": "c", "mode": "clone", "url": gs.URL + "/r.git"}, nil)
		var list []mission.Project
		b.ok("GET", "/projects", nil, &list)
		if len(list) != 1 {
			t.Fatalf("projects after the whitelist table: %+v", list)
		}
	})
}

func TestFailedCloneLeavesNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		gs := startGitServer(t, map[string]map[string]string{"r": {"f": "x"}})
		b := setup(t, db, setupOpts{gitEnv: gs.GitEnv})
		// A repository the server does not have: git fails, the directory
		// and the parents the request made are gone.
		status, body := b.do("POST", "/projects", map[string]any{"name": "N", "path": "deep/er/none", "mode": "clone", "url": gs.URL + "/none.git"}, b.write)
		if status != 502 || !strings.Contains(string(body), `"git_failed"`) || !strings.Contains(string(body), "not found") {
			t.Fatalf("clone of a missing repository: %d %s", status, body)
		}
		if e := entries(t, b.root); e != "" {
			t.Fatalf("a failed clone left %s", e)
		}
		// Into an existing empty directory: it stays, empty.
		empty := b.workspace("empty")
		b.fails("POST", "/projects", map[string]any{"name": "N", "path": "empty", "mode": "clone", "url": gs.URL + "/none.git"}, 502, "git_failed")
		if e := entries(t, empty); e != "" {
			t.Fatalf("a failed clone into an empty directory left %s", e)
		}
		var list []mission.Project
		b.ok("GET", "/projects", nil, &list)
		if len(list) != 0 {
			t.Fatalf("a failed clone registered %+v", list)
		}
	})
}

// TestCloneVerifiesTLS: without the test certificate in GIT_SSL_CAINFO the
// same clone fails, so the service does not turn verification off.
func TestCloneVerifiesTLS(t *testing.T) {
	t.Parallel()
	gs := startGitServer(t, map[string]map[string]string{"r": {"f": "x"}})
	b := setup(t, storetest.New(t, "sqlite"))
	b.fails("POST", "/projects", map[string]any{"name": "N", "path": "n", "mode": "clone", "url": gs.URL + "/r.git"}, 502, "git_failed")
	if exists(filepath.Join(b.root, "n")) {
		t.Fatal("a failed clone left its directory")
	}
}

func TestProjectPathConfinement(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		outside := t.TempDir()
		if err := os.Symlink(outside, filepath.Join(b.root, "out")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outside, "nothing"), filepath.Join(b.root, "dangling")); err != nil {
			t.Fatal(err)
		}
		outRepo := filepath.Join(outside, "repo")
		if err := os.Mkdir(outRepo, 0o755); err != nil {
			t.Fatal(err)
		}
		gitT(t, outRepo, "init", "-q")
		for _, mode := range []string{"init", "existing"} {
			for _, p := range []string{
				"", ".", "..", "../x", "a/../../x", "a/b/../../../x",
				outside, filepath.Join(outside, "new"), "/", "/tmp/aos-escape",
				"out", "out/new", "out/repo", "dangling", "dangling/x",
				"a\x00b", "a\nb", "a\x1bb", "tab\there",
				".git", "x/.git", "x/.GIT/hooks",
			} {
				status, body := b.do("POST", "/projects", map[string]any{"name": "P", "path": p, "mode": mode}, b.write)
				if status != 400 || !strings.Contains(string(body), `"invalid_input"`) {
					t.Errorf("%s at %q: %d %s, want 400", mode, p, status, body)
				}
			}
		}
		if e := entries(t, outside); e != "repo" {
			t.Fatalf("outside the root now holds %s", e)
		}
		if e := entries(t, b.root); e != "dangling,out" {
			t.Fatalf("the root now holds %s", e)
		}
		// Inside an existing repository's .git directory: refused, nothing made.
		repo := b.workspace("ws2")
		gitT(t, repo, "init", "-q")
		for _, p := range []string{"ws2/.git/branches", "ws2/.git/objects/zz", "ws2/.git"} {
			for _, mode := range []string{"init", "existing"} {
				if status, body := b.do("POST", "/projects", map[string]any{"name": "P", "path": p, "mode": mode}, b.write); status != 400 {
					t.Errorf("%s at %q: %d %s, want 400", mode, p, status, body)
				}
			}
		}
		if exists(filepath.Join(repo, ".git", "objects", "zz")) {
			t.Fatal("a directory was made inside .git")
		}
		if exists("/tmp/aos-escape") {
			t.Fatal("a project was created at an absolute path outside the root")
		}
		// Positive controls: a link inside the root to a directory inside
		// it is followed, and the project is stored at its real path.
		in := b.workspace("real")
		if err := os.Symlink(in, filepath.Join(b.root, "alias")); err != nil {
			t.Fatal(err)
		}
		var p mission.Project
		b.ok("POST", "/projects", map[string]any{"name": "P", "path": "alias/sub", "mode": "init"}, &p)
		if p.Path != "real/sub" || !exists(filepath.Join(in, "sub", ".git")) {
			t.Fatalf("project through an inner link: %+v", p)
		}
		var list []mission.Project
		b.ok("GET", "/projects", nil, &list)
		if len(list) != 1 {
			t.Fatalf("projects %+v", list)
		}
	})
}

func TestMissionByProject(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		var p mission.Project
		b.ok("POST", "/projects", map[string]any{"name": "P", "path": "p", "mode": "init"}, &p)
		var m mission.Mission
		b.ok("POST", "/missions", map[string]any{"objective": "fix it", "projectId": p.ID, "model": "claude-opus-5-5"}, &m)
		var spec struct{ Workspace, ProjectID string }
		if err := json.Unmarshal(m.Spec, &spec); err != nil {
			t.Fatal(err)
		}
		if m.ProjectID != p.ID || spec.Workspace != p.Dir || spec.ProjectID != p.ID {
			t.Fatalf("mission %+v spec %+v; want the project's directory %s", m, spec, p.Dir)
		}
		b.fails("POST", "/missions", map[string]any{"objective": "x", "projectId": "prj_nope", "model": "claude-opus-5-5"}, 404, "not_found")
		b.fails("POST", "/missions", map[string]any{"objective": "x", "projectId": "prj_nope", "workspace": b.workspace("w"), "model": "claude-opus-5-5"}, 404, "not_found")
		b.fails("POST", "/missions", map[string]any{"objective": "x", "model": "claude-opus-5-5"}, 400, "invalid_input")
		b.createMission() // another project's (none)
		var list []mission.Mission
		b.ok("GET", "/missions?projectId="+p.ID, nil, &list)
		if len(list) != 1 || list[0].ID != m.ID {
			t.Fatalf("missions of the project: %+v", list)
		}
		// Unregistering keeps the mission's project id.
		if st, _ := b.do("DELETE", "/projects/"+p.ID, nil, b.write); st != 204 {
			t.Fatalf("DELETE %d", st)
		}
		b.ok("GET", "/missions/"+m.ID, nil, &m)
		if m.ProjectID != p.ID {
			t.Fatalf("after unregistering: %+v", m)
		}
	})
}

// TestCloneTimeout: a server that never answers is given up on after the
// clone timeout, and the directory is removed.
func TestCloneTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	b := setup(t, storetest.New(t, "sqlite"), setupOpts{gitEnv: []string{"GIT_SSL_CAINFO=" + ca}, clone: 500 * time.Millisecond})
	start := time.Now()
	status, body := b.do("POST", "/projects", map[string]any{"name": "H", "path": "hang", "mode": "clone", "url": srv.URL + "/r.git"}, b.write)
	if status != 502 || !strings.Contains(string(body), "did not finish within 500ms") {
		t.Fatalf("clone from a silent server: %d %s", status, body)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the clone took %s to give up", d)
	}
	if e := entries(t, b.root); e != "" {
		t.Fatalf("a timed-out clone left %s", e)
	}
}
