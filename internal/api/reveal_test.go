package api_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/agent"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestRevealRoutes: a device's preparation leaves a pending reveal that
// the owner's routes list; the device's own token reaches neither reveal
// route; the owner's acknowledgement is kept (a repeat answers the first
// time) and the reveal is not listed again.
func TestRevealRoutes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		pd := b.pair("phone")
		d := b.mustDial(pd.Token)
		h := d.hello()
		res := d.call(map[string]any{"type": "agent.prepare", "machineId": h["machineId"], "packageId": "aos/docs-writer", "idempotencyKey": "reveal-1",
			"workspace": map[string]any{"kind": "new", "name": "revealed"}})
		op, _ := res["operation"].(map[string]any)
		opID, _ := op["operationId"].(string)
		if opID == "" {
			t.Fatalf("prepare: %v", res)
		}
		var pending []agent.Reveal
		waitFor(t, 30*time.Second, "the pending reveal", func() bool {
			b.ok("GET", "/agents/reveals", nil, &pending)
			return len(pending) == 1
		})
		r := pending[0]
		// The reveal is written with the creation receipt, before the
		// operation records its agent: poll until it does.
		var got map[string]any
		var agentID string
		waitFor(t, 30*time.Second, "the operation's agent", func() bool {
			got = d.call(map[string]any{"type": "operation.get", "operationId": opID})
			agentID, _ = got["operation"].(map[string]any)["agentId"].(string)
			return agentID != ""
		})
		if r.OperationID != opID || r.AgentID == "" || r.AgentID != agentID || r.MachineID != h["machineId"] || r.AgentName != "revealed" || r.OpenedAt != nil {
			t.Fatalf("reveal = %+v; operation = %v", r, got)
		}

		opened := "/operations/" + opID + "/opened"
		for _, c := range []struct{ method, path string }{{"GET", "/agents/reveals"}, {"POST", opened}} {
			if status, out := b.do(c.method, c.path, map[string]any{"agentId": r.AgentID}, pd.Token); status != http.StatusUnauthorized && status != http.StatusForbidden {
				t.Errorf("%s %s with the device token: %d %s", c.method, c.path, status, out)
			}
		}
		if status, _ := b.do("POST", opened, map[string]any{"agentId": r.AgentID}, b.read); status != http.StatusForbidden {
			t.Errorf("ack with a read token: %d, want 403", status)
		}
		b.fails("POST", opened, map[string]any{"agentId": "ag_other"}, http.StatusNotFound, agent.CodeOperationNotFound)
		b.fails("POST", opened, map[string]any{"agentId": r.AgentID, "focus": true}, http.StatusBadRequest, "invalid_json")

		var first, again agent.Reveal
		b.ok("POST", opened, map[string]any{"agentId": r.AgentID}, &first)
		if first.OpenedAt == nil || first.AgentID != r.AgentID {
			t.Fatalf("ack = %+v", first)
		}
		b.ok("POST", opened, map[string]any{"agentId": r.AgentID}, &again)
		if again.OpenedAt == nil || *again.OpenedAt != *first.OpenedAt {
			t.Fatalf("second ack = %+v, first %+v", again, first)
		}
		b.ok("GET", "/agents/reveals", nil, &pending)
		if len(pending) != 0 {
			t.Fatalf("pending after the ack = %+v", pending)
		}
	})
}
