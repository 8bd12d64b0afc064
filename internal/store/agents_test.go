package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestAgentQueries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		p := store.AgentPackage{PackageID: "x/a", Source: "community", Origin: "/src/a", Manifest: []byte(`{"a":1}`), State: "not_installed", UpdatedAt: 1}
		if err := s.UpsertAgentPackage(ctx, p); err != nil {
			t.Fatal(err)
		}
		p.State, p.Version, p.ReviewedAt, p.UpdatedAt = "installed", "v1", 7, 2
		if err := s.UpsertAgentPackage(ctx, p); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetAgentPackage(ctx, "x/a")
		if err != nil || got.State != "installed" || got.Version != "v1" || got.ReviewedAt != 7 || string(got.Manifest) != `{"a":1}` {
			t.Fatalf("get package = %+v, %v", got, err)
		}
		if _, err := s.GetAgentPackage(ctx, "x/none"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing package: %v", err)
		}
		if ps, err := s.ListAgentPackages(ctx); err != nil || len(ps) != 1 {
			t.Fatalf("list packages = %v, %v", ps, err)
		}

		op := store.AgentOperation{ID: "op1", Identity: "owner", IdemKey: "k", Fingerprint: "f", PackageID: "x/a", Request: []byte(`{}`),
			State: "accepted", Phase: "accepted", CreatedAt: 10, UpdatedAt: 10}
		if err := s.InsertAgentOperation(ctx, op); err != nil {
			t.Fatal(err)
		}
		dup := op
		dup.ID = "op2"
		if err := s.InsertAgentOperation(ctx, dup); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("same (identity, key): %v, want ErrConflict", err)
		}
		dup.Identity = "device:d1"
		if err := s.InsertAgentOperation(ctx, dup); err != nil {
			t.Fatalf("same key, other identity: %v", err)
		}
		op.State, op.Phase, op.ErrorCode, op.Doctor, op.UpdatedAt = "running", "doctor", "X", []byte(`["ok"]`), 11
		if err := s.UpdateAgentOperation(ctx, op); err != nil {
			t.Fatal(err)
		}
		o, err := s.GetAgentOperationByKey(ctx, "owner", "k")
		if err != nil || o.ID != "op1" || o.Phase != "doctor" || string(o.Doctor) != `["ok"]` || o.CreatedAt != 10 || o.UpdatedAt != 11 {
			t.Fatalf("by key = %+v, %v", o, err)
		}
		if _, err := s.GetAgentOperation(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing op: %v", err)
		}
		live, err := s.ListAgentOperationsInState(ctx, []string{"accepted", "running"})
		if err != nil || len(live) != 2 || live[0].ID != "op1" {
			t.Fatalf("in state = %+v, %v", live, err)
		}

		a := store.AgentRecord{ID: "ag1", Name: "a", PackageID: "x/a", Engine: "builtin", ProjectID: "prj", Workspace: "/w/a", OperationID: "op1", CreatedAt: 12}
		if err := s.InsertAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string]store.AgentRecord{
			"same workspace": {ID: "ag2", Workspace: "/w/a", OperationID: "op2"},
			"same operation": {ID: "ag3", Workspace: "/w/b", OperationID: "op1"},
		} {
			if err := s.InsertAgent(ctx, b); !errors.Is(err, store.ErrConflict) {
				t.Errorf("%s: %v, want ErrConflict", name, err)
			}
		}
		if got, err := s.GetAgentByOperation(ctx, "op1"); err != nil || got != a {
			t.Fatalf("by operation = %+v, %v", got, err)
		}
		if as, err := s.ListAgents(ctx, store.ListAgentsParams{PackageID: "x/a", Limit: 5}); err != nil || len(as) != 1 {
			t.Fatalf("list agents = %+v, %v", as, err)
		}
		if as, err := s.ListAgents(ctx, store.ListAgentsParams{PackageID: "x/b"}); err != nil || len(as) != 0 {
			t.Fatalf("list other package = %+v, %v", as, err)
		}
		if got, err := s.GetAgentByWorkspace(ctx, "/w/a"); err != nil || got != a {
			t.Fatalf("by workspace = %+v, %v", got, err)
		}
		if _, err := s.GetAgentByWorkspace(ctx, "/w/none"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("no agent at a workspace: %v", err)
		}

		tr := store.AgentTurn{ID: "rc1", Identity: "owner", IdemKey: "t", Fingerprint: "f", AgentID: "ag1", State: "accepted", CreatedAt: 1, UpdatedAt: 1}
		if err := s.InsertAgentTurn(ctx, tr); err != nil {
			t.Fatal(err)
		}
		tr2 := tr
		tr2.ID = "rc2"
		if err := s.InsertAgentTurn(ctx, tr2); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("same turn key: %v", err)
		}
		tr.MissionID, tr.UpdatedAt = "m1", 2
		if err := s.UpdateAgentTurn(ctx, tr); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetAgentTurnByKey(ctx, "owner", "t"); err != nil || got.MissionID != "m1" {
			t.Fatalf("turn by key = %+v, %v", got, err)
		}
		if _, err := s.GetAgentTurn(ctx, "rc9"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("missing turn: %v", err)
		}
	})
}

// TestAgentOperationLeases: an operation is updated only by its owner; a
// renewal is one statement over the owner's active operations; a claim
// takes only an expired lease, once.
func TestAgentOperationLeases(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		mk := func(id, owner string, lease int64) store.AgentOperation {
			o := store.AgentOperation{ID: id, Identity: "owner", IdemKey: id, Fingerprint: "f", PackageID: "x/a", Request: []byte(`{}`),
				State: "running", Phase: "setup", CreatedAt: 1, UpdatedAt: 1, Owner: owner, LeaseUntil: lease}
			if err := s.InsertAgentOperation(ctx, o); err != nil {
				t.Fatal(err)
			}
			return o
		}
		a1, _, b1 := mk("a1", "A", 100), mk("a2", "A", 100), mk("b1", "B", 100)
		done := mk("a3", "A", 100)
		done.State = "ready"
		if err := s.UpdateAgentOperation(ctx, done); err != nil {
			t.Fatal(err)
		}
		if n, err := s.RenewAgentOperationLeases(ctx, "A", 500); err != nil || n != 2 {
			t.Fatalf("renew A = %d, %v; want its 2 active operations", n, err)
		}
		if o, _ := s.GetAgentOperation(ctx, "b1"); o.LeaseUntil != 100 || o.Owner != "B" {
			t.Fatalf("B's operation after A's renewal: %+v", o)
		}
		if err := s.ClaimAgentOperation(ctx, "a1", "C", 400, 900); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("claim of a live lease: %v, want ErrConflict", err)
		}
		if err := s.ClaimAgentOperation(ctx, "b1", "C", 400, 900); err != nil {
			t.Fatalf("claim of an expired lease: %v", err)
		}
		if err := s.ClaimAgentOperation(ctx, "b1", "D", 400, 900); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second claim: %v, want ErrConflict", err)
		}
		b1.Phase = "doctor"
		if err := s.UpdateAgentOperation(ctx, b1); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("update by the old owner: %v, want ErrNotFound", err)
		}
		if o, _ := s.GetAgentOperation(ctx, "b1"); o.Owner != "C" || o.LeaseUntil != 900 || o.Phase != "setup" {
			t.Fatalf("claimed operation = %+v", o)
		}
		if err := s.ReleaseAgentOperationLeases(ctx, "A"); err != nil {
			t.Fatal(err)
		}
		if err := s.ClaimAgentOperation(ctx, a1.ID, "C", 1, 900); err != nil {
			t.Fatalf("claim after release: %v", err)
		}
		if err := s.ClaimAgentOperation(ctx, "a3", "C", 1000, 2000); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("claim of a finished operation: %v, want ErrConflict", err)
		}

		// Workspace claims: held while the holder is active, taken over
		// once it is not.
		if err := s.ClaimAgentWorkspace(ctx, "/w/x", "a2", 1); err != nil {
			t.Fatal(err)
		}
		if err := s.ClaimAgentWorkspace(ctx, "/w/x", "a2", 2); err != nil {
			t.Fatalf("re-claim by the holder: %v", err)
		}
		if err := s.ClaimAgentWorkspace(ctx, "/w/x", "b1", 2); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("claim held by an active operation: %v, want ErrConflict", err)
		}
		if err := s.ClaimAgentWorkspace(ctx, "/w/y", "a3", 1); err != nil {
			t.Fatal(err)
		}
		if err := s.ClaimAgentWorkspace(ctx, "/w/y", "b1", 2); err != nil {
			t.Fatalf("take over a finished operation's claim: %v", err)
		}
		if err := s.ReleaseAgentWorkspace(ctx, "/w/x", "a2"); err != nil {
			t.Fatal(err)
		}
		if err := s.ClaimAgentWorkspace(ctx, "/w/x", "b1", 3); err != nil {
			t.Fatalf("claim after release: %v", err)
		}

		// One install starts: a compare-and-set on the row's state.
		inst := store.AgentPackage{PackageID: "x/s", Source: "official", Manifest: []byte(`{}`), State: "installing", UpdatedAt: 1}
		if err := s.StartAgentPackageInstall(ctx, inst); err != nil {
			t.Fatalf("start an install with no row: %v", err)
		}
		if err := s.StartAgentPackageInstall(ctx, inst); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("second start: %v, want ErrConflict", err)
		}
		for _, st := range []string{"installed", "broken", "not_installed"} {
			inst.State = st
			if err := s.UpsertAgentPackage(ctx, inst); err != nil {
				t.Fatal(err)
			}
			inst.State = "installing"
			err := s.StartAgentPackageInstall(ctx, inst)
			if want := st == "not_installed"; (err == nil) != want {
				t.Errorf("start over %s: %v", st, err)
			}
		}

		// Installing → broken only as of the row that was read.
		p := store.AgentPackage{PackageID: "x/i", Source: "community", Manifest: []byte(`{}`), State: "installing", UpdatedAt: 5}
		if err := s.UpsertAgentPackage(ctx, p); err != nil {
			t.Fatal(err)
		}
		if err := s.MarkAgentPackageBroken(ctx, "x/i", 4, "why", 9); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("mark broken as of an old read: %v", err)
		}
		if err := s.MarkAgentPackageBroken(ctx, "x/i", 5, "why", 9); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.GetAgentPackage(ctx, "x/i"); got.State != "broken" || got.Broken != "why" {
			t.Fatalf("package = %+v", got)
		}

		// Revocations are durable and idempotent.
		if r, err := s.AgentIdentityRevoked(ctx, "device:d1"); err != nil || r {
			t.Fatalf("revoked before = %v, %v", r, err)
		}
		for range 2 {
			if err := s.RevokeAgentIdentity(ctx, "device:d1", 7); err != nil {
				t.Fatal(err)
			}
		}
		if r, err := s.AgentIdentityRevoked(ctx, "device:d1"); err != nil || !r {
			t.Fatalf("revoked after = %v, %v", r, err)
		}
	})
}

// TestListAgentsPages: keyset pages walk every agent once, in order, with
// ties on created_at broken by id, and per package.
func TestListAgentsPages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		for i := range 7 {
			pkg := "x/a"
			if i%2 == 1 {
				pkg = "x/b"
			}
			a := store.AgentRecord{ID: fmt.Sprintf("ag%d", 9-i), Name: "a", PackageID: pkg, Engine: "builtin", ProjectID: "p",
				Workspace: fmt.Sprintf("/w/%d", i), OperationID: fmt.Sprintf("op%d", i), CreatedAt: int64(i / 3)}
			if err := s.InsertAgent(ctx, a); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			pkg  string
			want string
		}{{"", "ag7 ag8 ag9 ag4 ag5 ag6 ag3"}, {"x/a", "ag7 ag9 ag5 ag3"}, {"x/b", "ag8 ag4 ag6"}} {
			var got []string
			var after store.AgentCursor
			for {
				page, err := s.ListAgents(ctx, store.ListAgentsParams{PackageID: tc.pkg, After: after, Limit: 2})
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range page {
					got = append(got, a.ID)
				}
				if len(page) < 2 {
					break
				}
				after = store.AgentCursor{CreatedAt: page[len(page)-1].CreatedAt, ID: page[len(page)-1].ID}
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("package %q: pages = %s, want %s", tc.pkg, g, tc.want)
			}
		}
	})
}

// TestReviewAgentPackageCompareAndSet: a review writes reviewed_at only,
// and only while the row holds the version that was reviewed; a version
// added since (a concurrent `aos package add`) is not marked reviewed, nor
// installed on the strength of an earlier read.
func TestReviewAgentPackageCompareAndSet(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		v1 := store.AgentPackage{PackageID: "x/r", Source: "community", Origin: "/src/r", Dir: "/d/r", Manifest: []byte(`{"v":1}`), Version: "v1", State: "not_installed", UpdatedAt: 1}
		if err := s.UpsertAgentPackage(ctx, v1); err != nil {
			t.Fatal(err)
		}
		// The owner read v1; v2 is added before the review is written.
		v2 := v1
		v2.Manifest, v2.Version, v2.UpdatedAt = []byte(`{"v":2}`), "v2", 2
		if err := s.UpsertAgentPackage(ctx, v2); err != nil {
			t.Fatal(err)
		}
		if err := s.ReviewAgentPackage(ctx, "x/r", "v1", 5); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("review of a replaced version: %v, want ErrConflict", err)
		}
		if got, err := s.GetAgentPackage(ctx, "x/r"); err != nil || got.Version != "v2" || got.ReviewedAt != 0 || string(got.Manifest) != `{"v":2}` {
			t.Fatalf("after the refused review = %+v, %v", got, err)
		}
		if err := s.ReviewAgentPackage(ctx, "x/none", "v1", 5); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("review of a missing package: %v, want ErrConflict", err)
		}
		if err := s.ReviewAgentPackage(ctx, "x/r", "v2", 6); err != nil {
			t.Fatal(err)
		}
		want := v2
		want.ReviewedAt = 6
		if got, err := s.GetAgentPackage(ctx, "x/r"); err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("after the review = %+v, %v; want %+v (only reviewed_at written)", got, err, want)
		}

		// An install of a community package starts only from the
		// version it read, and only once that version is reviewed.
		inst := v1
		inst.State, inst.ReviewedAt, inst.UpdatedAt = "installing", 5, 7
		if err := s.StartAgentPackageInstall(ctx, inst); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("install of a replaced version: %v, want ErrConflict", err)
		}
		u := store.AgentPackage{PackageID: "x/u", Source: "community", Manifest: []byte(`{}`), Version: "v1", State: "not_installed", UpdatedAt: 1}
		if err := s.UpsertAgentPackage(ctx, u); err != nil {
			t.Fatal(err)
		}
		u.State, u.ReviewedAt = "installing", 3 // a stale read that said reviewed
		if err := s.StartAgentPackageInstall(ctx, u); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("install of an unreviewed version: %v, want ErrConflict", err)
		}
		inst.Version = "v2"
		if err := s.StartAgentPackageInstall(ctx, inst); err != nil {
			t.Fatalf("install of the reviewed version: %v", err)
		}
	})
}
