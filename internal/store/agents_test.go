package store_test

import (
	"context"
	"errors"
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
		if as, err := s.ListAgents(ctx, "x/a", 5); err != nil || len(as) != 1 {
			t.Fatalf("list agents = %+v, %v", as, err)
		}
		if as, err := s.ListAgents(ctx, "x/b", 0); err != nil || len(as) != 0 {
			t.Fatalf("list other package = %+v, %v", as, err)
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
