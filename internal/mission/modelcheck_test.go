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
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
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
			{"claude-nonesuch-1", "", "unknown model"},
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
