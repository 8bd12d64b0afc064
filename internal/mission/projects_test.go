package mission_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestCheckCloneURL(t *testing.T) {
	for url, ok := range map[string]bool{
		"https://github.com/aos-run/aos.git":          true,
		"https://git.example.com:8443/team/repo":      true,
		"ssh://git@github.com/aos-run/aos.git":        true,
		"ssh://example.com:2222/srv/repo.git":         true,
		"git@github.com:aos-run/aos.git":              true,
		"git@10.0.0.1:repo.git":                       true,
		"":                                            false,
		"http://github.com/aos-run/aos.git":           false,
		"file:///srv/repo.git":                        false,
		"/srv/repo.git":                               false,
		"./repo":                                      false,
		"ext::sh -c id":                               false,
		"ext::ssh":                                    false,
		"https::github.com/x":                         false,
		"-oProxyCommand=id":                           false,
		"https://user:pw@github.com/x.git":            false,
		"https://token@github.com/x.git":              false,
		"https://:pw@github.com/x.git":                false,
		"ssh://git:pw@github.com/x.git":               false,
		"ssh://-oProxyCommand=id@github.com/x.git":    false,
		"ssh://-oProxyCommand=id/x.git":               false,
		"git@-oProxyCommand=id:x":                     false,
		"git@host:-x":                                 false,
		"git@host":                                    false,
		"git@ho/st:x":                                 false,
		"git@host:x y":                                false,
		"https://github.com/x\x00":                    false,
		"https://github.com/x\r\n":                    false,
		"https://github.com/":                         false,
		"https://github.com/x?u=1":                    false,
		"https://github.com/x#f":                      false,
		"Https://github.com/x":                        false,
		"git://github.com/x":                          false,
		"https://-github.com/x":                       false,
		"https://github.com\\x":                       false,
		"https://" + string(make([]byte, 2100)) + "x": false,
	} {
		err := mission.CheckCloneURL(url)
		if ok != (err == nil) {
			t.Errorf("CheckCloneURL(%q) = %v, want ok=%v", url, err, ok)
		}
		if err != nil && !errors.Is(err, mission.ErrInvalidInput) {
			t.Errorf("CheckCloneURL(%q) = %v, want ErrInvalidInput", url, err)
		}
	}
}

// TestProjectInitUnderLinks covers the paths that do not exist yet: the
// existing part is resolved with its links, the rest is created, and a
// refusal creates nothing.
func TestProjectInitUnderLinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "in"), filepath.Join(outside, "back")); err != nil {
		t.Fatal(err)
	}
	db := storetest.New(t, "sqlite")
	svc := mission.New(kernel.New(db.Store, kernel.Options{}), mission.Options{WorkspaceRoot: root})
	ctx := context.Background()
	for path, ok := range map[string]bool{
		"out/a/b":                             false,
		filepath.Join(outside, "back/x"):      true, // a link from outside into the root lands inside
		"in/../out/x":                         false,
		"in/./y":                              true,
		filepath.Join(root, "in", "..", ".."): false,
	} {
		_, err := svc.CreateProject(ctx, "test", mission.CreateProjectRequest{Name: "p", Path: path, Mode: mission.ProjectInit})
		if ok != (err == nil) {
			t.Errorf("init at %q: %v, want ok=%v", path, err, ok)
		}
	}
	if es, _ := os.ReadDir(outside); len(es) != 1 {
		t.Fatalf("outside holds %d entries, want only the link", len(es))
	}
	for _, want := range []string{"in/x/.git", "in/y/.git"} {
		if _, err := os.Stat(filepath.Join(root, want)); err != nil {
			t.Errorf("%s: %v", want, err)
		}
	}
}

// FuzzCheckCloneURL: whatever is accepted is one of the three allowed
// forms, could not be taken for an option, and carries no credential or
// control character.
func FuzzCheckCloneURL(f *testing.F) {
	for _, s := range []string{"https://github.com/a/b.git", "ssh://git@h/x", "git@h:x", "ext::sh", "-x", "https://u:p@h/x", "file:///x", "git@h:-x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, url string) {
		if mission.CheckCloneURL(url) != nil {
			return
		}
		if !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "ssh://") && !strings.HasPrefix(url, "git@") {
			t.Fatalf("accepted %q: not an allowed form", url)
		}
		if strings.Contains(url, "::") || strings.ContainsAny(url, " \t\r\n\x00\\") {
			t.Fatalf("accepted %q", url)
		}
		if rest, ok := strings.CutPrefix(url, "https://"); ok {
			host, _, _ := strings.Cut(rest, "/")
			if strings.Contains(host, "@") {
				t.Fatalf("accepted credentials in %q", url)
			}
		}
	})
}
