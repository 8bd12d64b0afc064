package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

func TestAgentRevealQueries(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		ctx, s := context.Background(), db.Store
		for _, r := range []store.AgentReveal{{OperationID: "op2", AgentID: "ag2", CreatedAt: 20}, {OperationID: "op1", AgentID: "ag1", CreatedAt: 10}} {
			if err := s.InsertAgentReveal(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		// A repeated insert (a recovery after a crash) changes nothing.
		if err := s.InsertAgentReveal(ctx, store.AgentReveal{OperationID: "op1", AgentID: "other", CreatedAt: 99}); err != nil {
			t.Fatal(err)
		}
		got, err := s.ListPendingAgentReveals(ctx, 0)
		if err != nil || len(got) != 2 || got[0] != (store.AgentReveal{OperationID: "op1", AgentID: "ag1", CreatedAt: 10}) || got[1].OperationID != "op2" {
			t.Fatalf("pending = %+v, %v", got, err)
		}
		if got, err := s.ListPendingAgentReveals(ctx, 1); err != nil || len(got) != 1 {
			t.Fatalf("pending limit 1 = %+v, %v", got, err)
		}
		if _, err := s.AckAgentReveal(ctx, "op1", "other", 30); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("ack of another agent: %v", err)
		}
		if _, err := s.AckAgentReveal(ctx, "none", "ag1", 30); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("ack of an unknown operation: %v", err)
		}
		r, err := s.AckAgentReveal(ctx, "op1", "ag1", 30)
		if err != nil || r.OpenedAt != 30 {
			t.Fatalf("ack = %+v, %v", r, err)
		}
		// The first acknowledgement is kept; the reveal stays acknowledged.
		if r, err := s.AckAgentReveal(ctx, "op1", "ag1", 40); err != nil || r.OpenedAt != 30 {
			t.Fatalf("second ack = %+v, %v", r, err)
		}
		if err := s.InsertAgentReveal(ctx, store.AgentReveal{OperationID: "op1", AgentID: "ag1", CreatedAt: 50}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ListPendingAgentReveals(ctx, 0); err != nil || len(got) != 1 || got[0].OperationID != "op2" {
			t.Fatalf("pending after ack = %+v, %v", got, err)
		}
	})
}
