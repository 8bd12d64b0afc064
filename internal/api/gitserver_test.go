package api_test

import (
	"encoding/pem"
	"io"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// gitServer is a real git smart-HTTP server over TLS: git http-backend
// under net/http/cgi behind httptest's TLS server.
type gitServer struct {
	URL    string   // https://127.0.0.1:port
	GitEnv []string // trusts the server's certificate (GIT_SSL_CAINFO)
}

// startGitServer serves bare repositories made from files: for each name,
// a repository <name>.git whose one commit holds the given files.
func startGitServer(t *testing.T, repos map[string]map[string]string) *gitServer {
	t.Helper()
	root := t.TempDir()
	for name, files := range repos {
		work := t.TempDir()
		for f, body := range files {
			if err := os.WriteFile(filepath.Join(work, f), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		gitT(t, work, "init", "-q", "-b", "main")
		gitT(t, work, "add", ".")
		gitT(t, work, "-c", "user.name=t", "-c", "user.email=t@t.invalid", "commit", "-q", "-m", "first")
		gitT(t, "", "clone", "-q", "--bare", work, filepath.Join(root, name+".git"))
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
	return &gitServer{URL: srv.URL, GitEnv: []string{"GIT_SSL_CAINFO=" + ca}}
}

// gitT runs git in dir and returns its output, failing the test on error.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	if dir != "" {
		args = append([]string{"-C", dir}, args...)
	}
	out, err := exec.Command("git", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v: %s", args, err, out)
	}
	return string(out)
}
