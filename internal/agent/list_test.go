package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestListAgentsPaged: ListAgents returns pages of the asked size, oldest
// first, each starting after the agent named; the default page is
// agent.DefaultAgentPage; an unknown start or a limit out of range is
// INVALID_REQUEST.
func TestListAgentsPaged(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db, setupOpts{noModel: true})
		ctx := context.Background()
		const n = agent.DefaultAgentPage + 5
		var want []string
		for i := range n {
			id := fmt.Sprintf("ag%03d", i)
			want = append(want, id)
			if err := db.Store.InsertAgent(ctx, store.AgentRecord{ID: id, Name: "a", PackageID: "x/a", Engine: "builtin", ProjectID: "p",
				Workspace: fmt.Sprintf("/w/%d", i), OperationID: fmt.Sprintf("op%d", i), CreatedAt: int64(i / 10)}); err != nil {
				t.Fatal(err)
			}
		}
		first, err := b.svc.ListAgents(ctx, "", 0)
		if err != nil || len(first) != agent.DefaultAgentPage {
			t.Fatalf("default page: %d agents, %v", len(first), err)
		}
		var got []string
		after := ""
		for {
			page, err := b.svc.ListAgents(ctx, after, 7)
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range page {
				got = append(got, a.AgentID)
			}
			if len(page) < 7 || len(got) > n {
				break
			}
			after = page[len(page)-1].AgentID
		}
		if g, w := strings.Join(got, " "), strings.Join(want, " "); g != w {
			t.Fatalf("pages of 7:\n got %s\nwant %s", g, w)
		}
		for _, tc := range []struct {
			after string
			limit int
		}{{"nope", 5}, {"", -1}, {"", store.MaxAgentPage + 1}} {
			if _, err := b.svc.ListAgents(ctx, tc.after, tc.limit); code(err) != agent.CodeInvalidRequest {
				t.Errorf("after %q limit %d: %v, want %s", tc.after, tc.limit, err, agent.CodeInvalidRequest)
			}
		}
	})
}
