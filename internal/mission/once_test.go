package mission_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestCreateMissionOnce: a mission created under a key has the key's id;
// the same key again returns it (replayed) and creates nothing; a refused
// creation leaves the key free; other keys make other missions. Each
// mission made has exactly one audit record, written with it; a repeat and
// a refusal write none. On both databases.
func TestCreateMissionOnce(t *testing.T) {
	for _, driver := range []string{"sqlite", "postgres"} {
		t.Run(driver, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			if err := os.Mkdir(filepath.Join(root, "ws"), 0o755); err != nil {
				t.Fatal(err)
			}
			svc := mission.New(kernel.New(storetest.New(t, driver).Store, kernel.Options{}), mission.Options{WorkspaceRoot: root})
			ctx := context.Background()
			req := mission.CreateRequest{Objective: "x", Workspace: "ws", Model: "claude-opus-5-5"}
			if _, _, err := svc.CreateMissionOnce(ctx, "t", "k1", mission.CreateRequest{Objective: "x", Workspace: "nope", Model: "m"}); err == nil {
				t.Fatal("a refused creation succeeded")
			}
			m1, replayed, err := svc.CreateMissionOnce(ctx, "t", "k1", req)
			if err != nil || replayed || m1.ID != mission.KeyedMissionID("k1") {
				t.Fatalf("first: %+v replayed=%v %v", m1, replayed, err)
			}
			again, replayed, err := svc.CreateMissionOnce(ctx, "t", "k1", req)
			if err != nil || !replayed || again.ID != m1.ID {
				t.Fatalf("repeat: %+v replayed=%v %v", again, replayed, err)
			}
			m2, _, err := svc.CreateMissionOnce(ctx, "t", "k2", req)
			if err != nil || m2.ID == m1.ID {
				t.Fatalf("another key: %+v %v", m2, err)
			}
			ms, err := svc.ListMissions(ctx, mission.ListMissionsRequest{Limit: 10})
			if err != nil || len(ms) != 2 {
				t.Fatalf("missions %d, want 2 (%v)", len(ms), err)
			}
			if _, _, err := svc.CreateMissionOnce(ctx, "t", "", req); !errors.Is(err, mission.ErrInvalidInput) {
				t.Errorf("no key: %v", err)
			}
			as, err := svc.ListAudit(ctx, 0, 100)
			var got []string
			for _, a := range as {
				got = append(got, a.Actor+" "+a.Action+" "+a.Target)
			}
			if want := []string{"t mission.create " + m2.ID, "t mission.create " + m1.ID}; err != nil || !slices.Equal(got, want) {
				t.Errorf("audit records %q (%v), want %q", got, err, want)
			}

			// Concurrent repeats of a new key: one creation, the others
			// replay it, none fails.
			const n = 6
			type res struct {
				id       string
				replayed bool
				err      error
			}
			out := make(chan res, n)
			for range n {
				go func() {
					m, replayed, err := svc.CreateMissionOnce(ctx, "t", "k3", req)
					out <- res{m.ID, replayed, err}
				}()
			}
			made := 0
			for range n {
				r := <-out
				if r.err != nil || r.id != mission.KeyedMissionID("k3") {
					t.Errorf("concurrent repeat: %q %v", r.id, r.err)
				}
				if !r.replayed {
					made++
				}
			}
			if made != 1 {
				t.Errorf("%d calls report creating the mission, want 1", made)
			}
		})
	}
}
