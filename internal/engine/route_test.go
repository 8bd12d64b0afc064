package engine_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
)

// routeScripts: "quota" and "quota2" answer every call 429 (the adapter's
// own retries included); "ok" finishes.
const routeScripts = `
scripts:
  - name: quota
    repeat: true
    turns:
      - error: {status: 429, message: "quota exceeded", retry_after: 10ms}
  - name: quota2
    repeat: true
    turns:
      - error: {status: 529, message: "overloaded", retry_after: 10ms}
  - name: ok
    turns:
      - tool_calls:
          - {name: finish, input: {status: partial, summary: "done on the fallback", evidence: [], openQuestions: []}}
`

// outcomeOf decodes a finished run's outcome.
func outcomeOf(t *testing.T, raw []byte) engine.Outcome {
	t.Helper()
	var res kernel.Result
	var out engine.Outcome
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(res.Payload, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// modelCalls returns the journaled model_call results in order.
func modelCalls(t *testing.T, e *env, rid string) []map[string]any {
	t.Helper()
	steps, err := e.db.Store.ListSteps(context.Background(), rid, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, s := range steps {
		if s.Kind == "model_call" {
			var m map[string]any
			if err := json.Unmarshal(s.Result, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
		}
	}
	return out
}

func TestRouteFailover(t *testing.T) {
	db := storetest.New(t, "sqlite")
	for _, tc := range []struct {
		name    string
		route   engine.Route
		status  string
		blocker string
		targets []string // the journaled target of each model call
		hopsTo  []string
	}{
		{"quota fails over to the next unused target", engine.Route{Fallbacks: []string{"script:quota", "script:quota2", "script:ok"}, FailoverOn: []string{"quota"}},
			kernel.StatusPartial, "", []string{"script:quota", "script:quota2", "script:ok"}, []string{"script:quota2", "script:ok"}},
		{"failure budget ends blocked", engine.Route{Fallbacks: []string{"script:quota2", "script:ok"}, FailoverOn: []string{"quota"}, FailureBudget: 2},
			kernel.StatusBlocked, engine.BlockerFailureBudgetExhausted, []string{"script:quota", "script:quota2"}, []string{"script:quota2"}},
		{"no unused target left", engine.Route{Fallbacks: []string{"script:quota", "script:quota2"}, FailoverOn: []string{"quota"}},
			kernel.StatusBlocked, engine.BlockerRouteExhausted, []string{"script:quota", "script:quota2"}, []string{"script:quota2", ""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, db, routeScripts)
			e.start()
			route := tc.route
			rid := e.mission(engine.Input{Objective: "x", Criteria: []string{"c"}, Model: "script:quota", Route: &route})
			r := e.wait(rid, kernel.StatusPartial, kernel.StatusBlocked, kernel.StatusFailed)
			out := outcomeOf(t, r.Result)
			if r.Status != tc.status || out.Blocker != tc.blocker {
				t.Fatalf("run %s blocker %q (%s), want %s %q", r.Status, out.Blocker, out.Summary, tc.status, tc.blocker)
			}
			var targets []string
			calls := modelCalls(t, e, rid)
			for _, c := range calls {
				targets = append(targets, c["target"].(string))
			}
			if strings.Join(targets, " ") != strings.Join(tc.targets, " ") {
				t.Fatalf("model calls went to %v, want %v (a failed target must never be reused)", targets, tc.targets)
			}
			var to []string
			for _, h := range out.Route {
				to = append(to, h.To)
				if h.Reason == "" || h.From == "" {
					t.Errorf("hop without a reason: %+v", h)
				}
			}
			if strings.Join(to, ",") != strings.Join(tc.hopsTo, ",") {
				t.Fatalf("route history %+v, want hops to %v", out.Route, tc.hopsTo)
			}
			// The route history is journaled with each call.
			if last := calls[len(calls)-1]; len(tc.hopsTo) > 0 && last["route"] == nil {
				t.Fatalf("the last model call's result has no route history: %v", last)
			}
			if out.Route[0].Class != engine.ClassQuota || out.Route[0].Status != 429 {
				t.Fatalf("first hop %+v, want class quota status 429", out.Route[0])
			}
		})
	}
}

// TestRouteReplay: a run that failed over waits for the owner, its worker
// stops, and a new worker replays the journal: the route is rebuilt from
// the journaled results (same targets, no non-determinism error), and the
// failed target is not called again.
func TestRouteReplay(t *testing.T) {
	db := storetest.New(t, "sqlite")
	e := newEnv(t, db, routeScripts+`
  - name: ask
    turns:
      - tool_calls: [{name: shell, input: {command: "echo hello", timeoutSec: 10}}]
      - expect: [{last_tool_result_contains: "hello"}]
        tool_calls:
          - {name: finish, input: {status: partial, summary: "after the replay", evidence: [], openQuestions: []}}
`)
	stop := e.start()
	rid := e.mission(engine.Input{Objective: "x", Criteria: []string{"c"}, Model: "script:quota", Network: "open",
		Route: &engine.Route{Fallbacks: []string{"script:ask"}, FailoverOn: []string{"quota"}}})
	w := e.pendingWait(rid)
	stop()
	quotaCalls := len(e.srv.Requests())
	e.start()
	if _, err := e.k.ResolveWait(context.Background(), w.ID, map[string]any{"approved": true}, "owner"); err != nil {
		t.Fatal(err)
	}
	r := e.wait(rid, kernel.StatusPartial, kernel.StatusBlocked, kernel.StatusFailed)
	if r.Status != kernel.StatusPartial {
		t.Fatalf("run %s: %s %s", r.Status, r.Error, r.Result)
	}
	if out := outcomeOf(t, r.Result); len(out.Route) != 1 || out.Route[0].To != "script:ask" {
		t.Fatalf("run %s (%s) route %+v", r.Status, r.Error, out.Route)
	}
	var targets []string
	for _, c := range modelCalls(t, e, rid) {
		targets = append(targets, c["target"].(string))
	}
	if strings.Join(targets, " ") != "script:quota script:ask script:ask" {
		t.Fatalf("model calls went to %v", targets)
	}
	for _, rq := range e.srv.Requests()[quotaCalls:] {
		if strings.Contains(string(rq.Body), `"script:quota"`) {
			t.Fatal("the failed target was called again after the replay")
		}
	}
}
