package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// racingStore is the real store, with hooks (nil: none) called after a
// package row is read, before an install is recorded and after it is.
type racingStore struct {
	store.Store
	afterGetPackage    func(id string)
	beforeStartInstall func(id string)
	afterStartInstall  func(id string)
}

func (r racingStore) StartAgentPackageInstall(ctx context.Context, p store.AgentPackage) error {
	if r.beforeStartInstall != nil {
		r.beforeStartInstall(p.PackageID)
	}
	err := r.Store.StartAgentPackageInstall(ctx, p)
	if err == nil && r.afterStartInstall != nil {
		r.afterStartInstall(p.PackageID)
	}
	return err
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
			Getenv: func(k string) string { return b.env[k] }})
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

// TestInstallRacingANewVersion: the owner reviewed a package's first
// version; its second version, whose setup the owner never read, arrives
// while an install of the first is under way. Whether the new row lands
// before the install is recorded, or the new tree after, the unreviewed
// setup never runs (it runs as the owner's user, not sandboxed): the
// install refuses (PACKAGE_REVIEW_REQUIRED) or ends broken
// (its copied tree is not the version it recorded).
func TestInstallRacingANewVersion(t *testing.T) {
	t.Parallel()
	const unreviewed = "echo unreviewed >> $COUNT\n"
	for _, c := range []struct {
		name  string
		race  func(b *bundle, rs *racingStore, dir string)
		codes []string
	}{
		{"row replaced before the install is recorded", func(b *bundle, rs *racingStore, dir string) {
			rs.beforeStartInstall = func(string) {
				rs.beforeStartInstall = nil
				write(b.t, filepath.Join(dir, "setup.sh"), strings.ReplaceAll(unreviewed, "$COUNT", b.count("fix/irace")))
				if _, err := b.svc.AddPackage(context.Background(), dir); err != nil {
					b.t.Errorf("add the new version: %v", err)
				}
			}
		}, []string{agent.CodePackageReviewRequired}},
		{"tree replaced after the install is recorded", func(b *bundle, rs *racingStore, _ string) {
			rs.afterStartInstall = func(string) {
				rs.afterStartInstall = nil
				// What AddPackage's rename of the new tree does, had it
				// passed its state check just before the install began.
				write(b.t, filepath.Join(b.data, "packages", "community", "fix__irace", "setup.sh"), strings.ReplaceAll(unreviewed, "$COUNT", b.count("fix/irace")))
			}
		}, []string{agent.CodePackageBroken}},
	} {
		t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			t.Parallel()
			storetest.Each(t, func(t *testing.T, db storetest.DB) {
				b := setup(t, db, setupOpts{noModel: true})
				dir := b.pkg(fixture{id: "fix/irace", setup: countSetup, doctor: okDoctor}, true)
				rs := &racingStore{Store: db.Store}
				c.race(b, rs, dir)
				racer := b.service(rs, b.ms)
				res, err := racer.Prepare(context.Background(), agent.OwnerIdentity, agent.PrepareRequest{MachineID: racer.MachineID(), PackageID: "fix/irace",
					IdempotencyKey: "ir-1", Workspace: agent.Workspace{Kind: agent.WorkspaceNew}})
				if err != nil {
					t.Fatal(err)
				}
				o := b.settled(res.Operation.OperationID)
				data, _ := os.ReadFile(b.count("fix/irace"))
				if strings.Contains(string(data), "unreviewed") {
					t.Fatalf("the unreviewed setup ran (operation %s)", js(o))
				}
				if o.State == agent.StateReady || o.Error == nil || !slices.Contains(c.codes, o.Error.Code) {
					t.Fatalf("operation %s, want an error coded %v", js(o), c.codes)
				}
			})
		})
	}
}
