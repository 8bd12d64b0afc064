package mission_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
	"path/filepath"
)

// TestCreateChecksModel: a mission created through the service (the API's
// path as well as aos run's) names a model that can run it, or is refused
// with nothing created: a model no provider serves, one its provider does
// not know, and a scripted model without the scripted server's base URL.
func TestCreateChecksModel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx := context.Background()
		root := t.TempDir()
		if err := os.Mkdir(filepath.Join(root, "ws"), 0o755); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		svc := mission.New(kernel.New(db.Store, kernel.Options{}), mission.Options{WorkspaceRoot: root, Getenv: func(k string) string { return env[k] }})
		for _, c := range []struct {
			model, baseURL, want string // want: "" for accepted, else a word of the refusal
		}{
			{"mystery-model", "", "no provider"},
			{"claude-nonesuch-1", "", "not known"},
			{"script:demo", "", "ANTHROPIC_BASE_URL"},
			{"script:demo", "http://127.0.0.1:9", ""},
			{"claude-opus-5-5", "", ""},
		} {
			env["ANTHROPIC_BASE_URL"] = c.baseURL
			before, err := db.Store.ListMissions(ctx, store.ListMissionsParams{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			_, err = svc.CreateMission(ctx, "test", mission.CreateRequest{Objective: "x", Workspace: "ws", Model: c.model})
			after, _ := db.Store.ListMissions(ctx, store.ListMissionsParams{Limit: 100})
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s (base %q): %v; want it accepted", c.model, c.baseURL, err)
			case c.want != "" && (!errors.Is(err, mission.ErrInvalidInput) || !strings.Contains(err.Error(), c.want)):
				t.Errorf("%s (base %q): %v; want invalid input saying %q", c.model, c.baseURL, err, c.want)
			case c.want != "" && len(after) != len(before):
				t.Errorf("%s: a refused mission was created", c.model)
			}
		}
	})
}

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
