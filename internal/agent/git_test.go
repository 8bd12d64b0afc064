package agent_test

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/store/storetest"
)

// startGitServer serves one bare repository, pkg.git, holding files, over
// real git smart HTTP behind TLS; it returns its URL, the environment
// that trusts its certificate and a count of the requests it got.
func startGitServer(t *testing.T, files map[string]string) (string, []string, *atomic.Int64) {
	t.Helper()
	root, work := t.TempDir(), t.TempDir()
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(work, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"-C", work, "init", "-q", "-b", "main"}, {"-C", work, "add", "."},
		{"-C", work, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-m", "first"},
		{"clone", "-q", "--bare", work, filepath.Join(root, "pkg.git")}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	gitBin, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	h := &cgi.Handler{Path: gitBin, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard}
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv.URL, []string{"GIT_SSL_CAINFO=" + ca}, &hits
}

// TestCommunityPackageFromGit: a package cloned over https with gitx is a
// community package: not installable until reviewed, then prepared.
// Non-https/ssh URLs are refused before any clone. The test's git server
// is on this machine, so the owner allowed private clones
// (AOS_CLONE_ALLOW_PRIVATE=1); TestPackageGitPrivateRefused is the default.
func TestCommunityPackageFromGit(t *testing.T) {
	t.Parallel()
	url, gitEnv, _ := startGitServer(t, map[string]string{
		"aos-package.json": `{"packageId":"git/pkg","name":"From git","description":"a package from a git server","category":"test","engine":"builtin","viewerPackageId":null,"version":"2","doctor":"doctor.sh"}`,
		"doctor.sh":        "echo fine\n",
	})
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db, setupOpts{gitEnv: gitEnv, allowPrivateClones: true})
		ctx := context.Background()
		for _, bad := range []string{"file:///etc", "ext::sh -c id", "http://127.0.0.1:1/x.git"} {
			if _, err := b.svc.AddPackage(ctx, bad); err == nil {
				t.Errorf("source %q accepted", bad)
			}
		}
		p, err := b.svc.AddPackage(ctx, url+"/pkg.git")
		if err != nil {
			t.Fatal(err)
		}
		if p.PackageID != "git/pkg" || p.InstallAllowed || p.Verified {
			t.Fatalf("added = %s", js(p))
		}
		if _, err := b.prepare(agent.OwnerIdentity, "g-1", "git/pkg", agent.Workspace{Kind: "new"}); code(err) != agent.CodePackageReviewRequired {
			t.Fatalf("unreviewed: %v", err)
		}
		if _, err := b.svc.ReviewPackage(ctx, "git/pkg"); err != nil {
			t.Fatal(err)
		}
		if o := b.settled(b.mustPrepare("g-2", "git/pkg", agent.Workspace{Kind: "new"}).OperationID); o.State != agent.StateReady {
			t.Fatalf("%s", js(o))
		}
	})
}

// TestPackageGitPrivateRefused: by default a community package's git URL
// goes through the mission service's clone rule, like a project's: a
// loopback or private host is refused with CLONE_FAILED before git runs
// (the real git server on this machine gets no request) and nothing is
// added.
func TestPackageGitPrivateRefused(t *testing.T) {
	t.Parallel()
	url, gitEnv, hits := startGitServer(t, map[string]string{
		"aos-package.json": `{"packageId":"git/pkg","name":"From git","description":"a package from a git server","category":"test","engine":"builtin","viewerPackageId":null,"version":"2"}`,
	})
	port := url[strings.LastIndex(url, ":")+1:]
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db, setupOpts{gitEnv: gitEnv})
		ctx := context.Background()
		before, err := b.svc.Packages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, src := range []string{url + "/pkg.git", "https://localhost:" + port + "/pkg.git", "https://[fd00:0:0:0:0:0:0:1]/pkg.git",
			"https://10.1.2.3/pkg.git", "https://169.254.169.254/pkg.git", "git@127.0.0.1:pkg.git", "ssh://192.168.1.1/pkg.git"} {
			_, err := b.svc.AddPackage(ctx, src)
			var e *agent.Error
			if !errors.As(err, &e) || e.Code != agent.CodeCloneFailed || !strings.Contains(e.Message, "private network") {
				t.Errorf("%s: %v, want CLONE_FAILED for a private address", src, err)
			}
		}
		if n := hits.Load(); n != 0 {
			t.Errorf("the git server got %d requests", n)
		}
		after, err := b.svc.Packages(ctx)
		if err != nil || len(after) != len(before) {
			t.Errorf("packages %d → %d, %v", len(before), len(after), err)
		}
		if ents, _ := os.ReadDir(b.data); len(ents) > 1 { // the machine id only
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("the data dir holds %v", names)
		}
	})
}
