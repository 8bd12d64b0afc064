package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// racingStore is the real store, with a hook called after a package row
// is read (nil: none).
type racingStore struct {
	store.Store
	afterGetPackage func(id string)
}

func (r racingStore) GetAgentPackage(ctx context.Context, id string) (store.AgentPackage, error) {
	p, err := r.Store.GetAgentPackage(ctx, id)
	if r.afterGetPackage != nil {
		r.afterGetPackage(id)
	}
	return p, err
}

// TestReviewRacingANewVersion: a new version of a package is added (from
// the same source, by another server on the database) between the
// review's read of the package and its write. The review is refused with
// PACKAGE_REVIEW_REQUIRED, and the new version stays unreviewed, with its
// own tree hash; a second review then records it.
func TestReviewRacingANewVersion(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx := context.Background()
		b := setup(t, db, setupOpts{noModel: true})
		dir := b.pkg(fixture{id: "fix/race", doctor: okDoctor}, false)
		before, err := db.Store.GetAgentPackage(ctx, "fix/race")
		if err != nil {
			t.Fatal(err)
		}
		raced := false
		rs := racingStore{Store: db.Store}
		rs.afterGetPackage = func(id string) {
			if raced || id != "fix/race" {
				return
			}
			raced = true
			write(t, filepath.Join(dir, "AGENTS.md"), "# Changed after the owner read it\n")
			if _, err := b.svc.AddPackage(ctx, dir); err != nil {
				t.Errorf("add the new version: %v", err)
			}
		}
		reviewer, err := agent.New(agent.Options{Store: rs, Missions: b.ms, WorkspaceRoot: b.root, DataDir: b.data,
			Getenv: func(k string) string { return b.env[k] }, Lease: testLease})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := reviewer.ReviewPackage(ctx, "fix/race"); code(err) != agent.CodePackageReviewRequired {
			t.Fatalf("review racing a new version: %v, want %s", err, agent.CodePackageReviewRequired)
		}
		after, err := db.Store.GetAgentPackage(ctx, "fix/race")
		if err != nil || !raced || after.Version == before.Version || after.ReviewedAt != 0 {
			t.Fatalf("after the raced review: %+v, %v (raced %v; version before %s)", after, err, raced, before.Version)
		}
		if got, _ := os.ReadFile(filepath.Join(after.Dir, "AGENTS.md")); string(got) != "# Changed after the owner read it\n" {
			t.Fatalf("the index's tree holds %q", got)
		}
		p, err := reviewer.ReviewPackage(ctx, "fix/race")
		if err != nil || !p.InstallAllowed {
			t.Fatalf("second review = %s, %v", js(p), err)
		}
		if again, err := db.Store.GetAgentPackage(ctx, "fix/race"); err != nil || again.Version != after.Version || again.ReviewedAt == 0 {
			t.Fatalf("after the second review: %+v, %v", again, err)
		}
	})
}
