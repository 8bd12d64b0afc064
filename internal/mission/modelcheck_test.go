package mission_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestLocalModelCheckTimeout: a local endpoint that takes the probe but
// does not answer within the check's time (a server loading a large
// model) does not stop the mission; one that refuses connections does,
// with model_unavailable.
func TestLocalModelCheckTimeout(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() { close(release) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/v1"
	ln.Close()

	for _, tc := range []struct {
		name, base string
		want       error
	}{
		{"slow endpoint", slow.URL + "/v1", nil},
		{"refused connection", dead, mission.ErrModelUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.Mkdir(filepath.Join(root, "p"), 0o755); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{provider.EnvLocalBase: tc.base}
			svc := mission.New(kernel.New(storetest.New(t, "sqlite").Store, kernel.Options{}), mission.Options{WorkspaceRoot: root,
				Getenv: func(k string) string { return env[k] }, ModelCheckTimeout: 300 * time.Millisecond})
			t0 := time.Now()
			_, err := svc.CreateMission(context.Background(), "test", mission.CreateRequest{Objective: "x", Workspace: "p", Model: "local:big"})
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if d := time.Since(t0); d > 10*time.Second {
				t.Errorf("the check took %v", d)
			}
		})
	}
}
