package agent_test

import (
	"context"
	"encoding/pem"
	"io"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/store/storetest"
)

// startGitServer serves one bare repository, pkg.git, holding files, over
// real git smart HTTP behind TLS; it returns its URL and the environment
// that trusts its certificate.
func startGitServer(t *testing.T, files map[string]string) (string, []string) {
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
	srv := httptest.NewTLSServer(&cgi.Handler{Path: gitBin, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard})
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	return srv.URL, []string{"GIT_SSL_CAINFO=" + ca}
}

// TestCommunityPackageFromGit: a package cloned over https with gitx is a
// community package: not installable until reviewed, then prepared.
// Non-https/ssh URLs are refused before any clone.
func TestCommunityPackageFromGit(t *testing.T) {
	t.Parallel()
	url, gitEnv := startGitServer(t, map[string]string{
		"aos-package.json": `{"packageId":"git/pkg","name":"From git","description":"a package from a git server","category":"test","engine":"builtin","viewerPackageId":null,"version":"2","doctor":"doctor.sh"}`,
		"doctor.sh":        "echo fine\n",
	})
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db, setupOpts{gitEnv: gitEnv})
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
