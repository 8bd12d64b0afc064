package tool_test

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

// gitServer is a real git smart-HTTP server over TLS (git http-backend
// under net/http/cgi behind httptest's TLS server) serving one empty bare
// repository, remote.git, that accepts pushes.
type gitServer struct {
	URL  string // https://127.0.0.1:port
	CA   string // PEM file of the server's certificate
	Root string // the directory holding remote.git
}

func startGitServer(t *testing.T) *gitServer {
	t.Helper()
	root := t.TempDir()
	git(t, root, "init", "-q", "--bare", "remote.git")
	git(t, root, "--git-dir=remote.git", "config", "http.receivepack", "true")
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
	return &gitServer{URL: srv.URL, CA: ca, Root: root}
}
