package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// finishPartial is a closing turn used by several scripts.
const finishPartial = `
      - tool_calls:
          - {name: finish, input: {status: partial, summary: "stopping here", evidence: [], openQuestions: []}}`

// loopCase is one behaviour of the loop, driven by a script whose turns
// assert what the model must have been told.
type loopCase struct {
	name   string
	script string
	input  func(in *engine.Input)
	// act runs while the mission is live (answers waits, posts messages).
	act    func(t *testing.T, e *env, rid string)
	status string
	check  func(t *testing.T, e *env, rid string, r store.Run)
}

func loopCases() []loopCase {
	open := func(in *engine.Input) { in.Network = "open" } // shell risk becomes network: ask
	answer := func(res any) func(t *testing.T, e *env, rid string) {
		return func(t *testing.T, e *env, rid string) {
			w := e.pendingWait(rid)
			if _, err := e.k.ResolveWait(context.Background(), w.ID, res, "owner"); err != nil {
				t.Fatal(err)
			}
		}
	}
	return []loopCase{
		{name: "approval approved", input: open, act: answer(map[string]any{"approved": true}), status: kernel.StatusPartial, script: `
    turns:
      - tool_calls: [{name: shell, input: {command: "echo hello", timeoutSec: 10}}]
      - expect: [{last_tool_result_contains: "hello"}]` + finishPartial},
		{name: "approval denied", input: open, act: answer(map[string]any{"approved": false, "reason": "not now"}), status: kernel.StatusPartial, script: `
    turns:
      - tool_calls: [{name: shell, input: {command: "echo hello", timeoutSec: 10}}]
      - expect: [{last_tool_result_contains: "Denied by owner/policy: not now"}]` + finishPartial},
		{name: "approval expires as deny", input: func(in *engine.Input) { in.Network, in.ApprovalTimeoutSec = "open", 1 }, status: kernel.StatusPartial, script: `
    turns:
      - tool_calls: [{name: shell, input: {command: "echo hello", timeoutSec: 10}}]
      - expect: [{last_tool_result_contains: "expired"}]` + finishPartial},
		{name: "approval remembered", input: open, act: answer(map[string]any{"approved": true, "remember": true}), status: kernel.StatusPartial, script: `
    turns:
      - tool_calls: [{name: shell, input: {command: "echo one", timeoutSec: 10}}]
      - expect: [{last_tool_result_contains: "one"}]
        tool_calls: [{name: shell, input: {command: "echo two", timeoutSec: 10}}]
      - expect: [{last_tool_result_contains: "two"}]` + finishPartial,
			check: func(t *testing.T, e *env, rid string, r store.Run) {
				if global, _ := e.db.Store.ListPolicyRules(context.Background(), ""); len(global) != 0 {
					t.Errorf("global rules = %+v, want none: a mission without a project remembers for its directory", global)
				}
				rules, _ := e.db.Store.ListPolicyRules(context.Background(), "dir:"+e.ws)
				if len(rules) != 1 || rules[0].Tool != "shell" || rules[0].CommandPrefix != "echo" || rules[0].Decision != "allow" || rules[0].ProjectID != "dir:"+e.ws {
					t.Errorf("rules = %+v, want one allow shell `echo` scoped to dir:%s", rules, e.ws)
				}
				ws, _ := e.db.Store.ListWaits(context.Background(), store.ListWaitsParams{RunID: rid})
				if len(ws) != 1 {
					t.Errorf("waits = %d, want 1 (the second echo is allowed by the remembered rule)", len(ws))
				}
				// The same call in a mission on another directory asks again.
				other := filepath.Join(t.TempDir(), "other")
				if err := demo.WriteRepo(other); err != nil {
					t.Fatal(err)
				}
				rid2 := e.missionBudget(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:test", Network: "open", Workspace: other},
					kernel.Budget{USD: 0.10, Turns: 40})
				if w := e.pendingWait(rid2); !strings.Contains(string(w.Payload), "echo one") {
					t.Errorf("the other directory's mission waits for %s", w.Payload)
				}
			}},
		{name: "bare interpreter not remembered", input: open, status: kernel.StatusPartial,
			act: func(t *testing.T, e *env, rid string) {
				for range 2 { // the second bash -c asks again
					answer(map[string]any{"approved": true, "remember": true})(t, e, rid)
				}
			}, script: `
    turns:
      - tool_calls: [{name: shell, input: {command: "bash -c 'echo one'", timeoutSec: 10}}]
      - expect: [{last_tool_result_contains: "one"}]
        tool_calls: [{name: shell, input: {command: "bash -c 'echo two'", timeoutSec: 10}}]
      - expect: [{last_tool_result_contains: "two"}]` + finishPartial,
			check: func(t *testing.T, e *env, rid string, r store.Run) {
				if rules, _ := e.db.Store.ListPolicyRules(context.Background(), "dir:"+e.ws); len(rules) != 0 {
					t.Errorf("rules = %+v, want none: bash -c is never remembered", rules)
				}
				evs, _ := e.db.Store.ListEvents(context.Background(), store.ListEventsParams{MissionID: r.MissionID})
				n := 0
				for _, ev := range evs {
					if ev.Kind == "policy.decision" && strings.Contains(string(ev.Payload), `"notRemembered"`) {
						n++
					}
				}
				if n != 2 {
					t.Errorf("policy.decision events saying why nothing was remembered = %d, want 2", n)
				}
			}},
		{name: "question answered", act: answer(map[string]string{"answer": "blue"}), status: kernel.StatusPartial, script: `
    turns:
      - tool_calls: [{name: ask_owner, input: {question: "Which colour?", options: [red, blue]}}]
      - expect: [{last_tool_result_contains: "The owner answered: blue"}]` + finishPartial},
		{name: "criteria proposal gates writes", input: func(in *engine.Input) { in.Criteria = nil },
			act: answer(map[string]string{"answer": "Yes — use these criteria"}), status: kernel.StatusDone, script: `
    turns:
      - expect: [{first_user_contains: "propose 3-8"}]
        tool_calls: [{name: write_file, input: {path: notes.txt, content: "x"}}]
      - expect: [{last_tool_result_contains: "not confirmed"}]
        tool_calls: [{name: propose_criteria, input: {criteria: [{text: "notes.txt exists"}], detail: "simple"}}]
      - expect: [{last_tool_result_contains: "confirmed the criteria"}]
        tool_calls: [{name: write_file, input: {path: notes.txt, content: "x"}}]
      - expect: [{last_tool_result_error: false}]
        tool_calls: [{name: update_criteria, input: {updates: [{id: c1, passes: true, evidence: "wrote notes.txt"}]}}]
      - tool_calls: [{name: finish, input: {status: done, summary: "done", evidence: ["notes.txt"], openQuestions: []}}]`},
		{name: "finish done is gated on criteria", status: kernel.StatusPartial, script: `
    turns:
      - tool_calls: [{name: finish, input: {status: done, summary: "claimed", evidence: [], openQuestions: []}}]
      - expect: [{last_tool_result_contains: "do not pass with evidence"}]` + finishPartial},
		{name: "nudges then partial", status: kernel.StatusPartial, script: `
    turns:
      - text: "thinking aloud"
      - expect: [{operator_note_contains: "without calling a tool"}]
        text: "still thinking"
      - text: "and more"`},
		{name: "invalid tool input has no step", status: kernel.StatusPartial, script: `
    turns:
      - tool_calls: [{name: read_file, input: {nope: 1}}, {name: no_such_tool, input: {}}]
      - expect: [{transcript_contains: "invalid input"}]` + finishPartial,
			check: func(t *testing.T, e *env, rid string, r store.Run) {
				steps, _ := e.db.Store.ListSteps(context.Background(), rid, -1, 0)
				for _, s := range steps {
					if s.Kind == "tool_call" {
						t.Errorf("a refused call became step %d (%s)", s.Seq, s.Name)
					}
				}
			}},
		{name: "refusal ends blocked", status: kernel.StatusBlocked, script: `
    turns:
      - refusal: {category: cyber, explanation: "no"}`},
		{name: "stall: note then question", act: answer(map[string]string{"answer": "Stop the mission"}), status: kernel.StatusPartial, script: `
    repeat: true
    turns:
      - tool_calls: [{name: read_file, input: {path: calc.sh}}]`,
			check: func(t *testing.T, e *env, rid string, r store.Run) {
				ws, _ := e.db.Store.ListWaits(context.Background(), store.ListWaitsParams{RunID: rid})
				if len(ws) != 1 || !strings.Contains(string(ws[0].Payload), `"source":"stall"`) {
					t.Errorf("waits = %+v, want one stall question", ws)
				}
				if !strings.Contains(string(r.Result), "appeared stuck") {
					t.Errorf("result = %s", r.Result)
				}
			}},
		{name: "stall: no progress for 15 turns", status: kernel.StatusPartial, act: answer(map[string]string{"answer": "Stop the mission"}), script: func() string {
			var b strings.Builder
			b.WriteString("\n    turns:\n")
			for i := 0; i < 40; i++ {
				expect := ""
				if i == 15 {
					expect = "expect: [{operator_note_contains: \"appear stuck\"}], "
				}
				fmt.Fprintf(&b, "      - {%stool_calls: [{name: read_file, input: {path: calc.sh, startLine: %d, endLine: %d}}]}\n", expect, i%3+1, i%3+1)
			}
			return strings.TrimSuffix(b.String(), "\n")
		}(),
			check: func(t *testing.T, e *env, rid string, r store.Run) {
				if r.Turns < 30 {
					t.Errorf("stopped after %d turns; the question comes at the second trigger (30 turns without progress)", r.Turns)
				}
			}},
		{name: "context guard", input: func(in *engine.Input) { in.ContextWindow = 1000 }, status: kernel.StatusPartial, script: `
    turns:
      - usage: {input: 750, output: 10}
        tool_calls: [{name: read_file, input: {path: calc.sh}}]
      - expect: [{operator_note_contains: "70%"}]
        usage: {input: 950, output: 10}
        tool_calls: [{name: read_file, input: {path: test.sh}}]`,
			check: func(t *testing.T, e *env, rid string, r store.Run) {
				if !strings.Contains(string(r.Result), "context window") {
					t.Errorf("result = %s", r.Result)
				}
			}},
		{name: "budget: final summarising turn", input: func(in *engine.Input) {}, status: kernel.StatusBudgetExhausted, script: `
    price: {input: 1000, output: 0}
    repeat: true
    turns:
      - usage: {input: 19, output: 0}
        tool_calls: [{name: read_file, input: {path: calc.sh}}]`,
			check: func(t *testing.T, e *env, rid string, r store.Run) {
				reqs := e.srv.Requests()
				last := string(reqs[len(reqs)-1].Body)
				if !strings.Contains(last, "final turn") {
					t.Errorf("the last model call did not carry the final-turn note")
				}
				t.Logf("spent %.4f over %d turns", r.SpentUSD, r.Turns)
				if r.SpentUSD < 0.09 || r.SpentUSD > 0.1301 {
					t.Errorf("spent %.4f, want about 0.09–0.12 of the 0.10 budget", r.SpentUSD)
				}
			}},
		{name: "steering message", act: func(t *testing.T, e *env, rid string) {
			if _, err := e.k.PostOwnerMessage(context.Background(), rid, "please also update README"); err != nil {
				t.Fatal(err)
			}
			answer(map[string]string{"answer": "ok"})(t, e, rid)
		}, status: kernel.StatusPartial, script: `
    turns:
      - tool_calls: [{name: ask_owner, input: {question: "ready?"}}]
      - expect: [{transcript_contains: "please also update README"}]` + finishPartial},
		{name: "edit staleness", status: kernel.StatusPartial, script: `
    turns:
      - tool_calls: [{name: read_file, input: {path: calc.sh}}]
      - tool_calls: [{name: shell, input: {command: "echo '# changed' >> calc.sh", timeoutSec: 10}}]
      - tool_calls: [{name: edit_file, input: {path: calc.sh, oldString: "add()", newString: "sum()"}}]
      - expect: [{last_tool_result_error: true}, {last_tool_result_contains: "changed"}]` + finishPartial},
	}
}

func TestLoopBehaviours(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		for _, tc := range loopCases() {
			t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
				e := newEnv(t, storetest.New(t, db.Driver), "name: test\n"+dedent(tc.script))
				e.start()
				in := engine.Input{Objective: "test objective", Criteria: []string{"it works"}, Model: "script:test"}
				if tc.input != nil {
					tc.input(&in)
				}
				if in.Network == "" {
					in.Network = "none"
				}
				rid := e.missionBudget(in, kernel.Budget{USD: 0.10, Turns: 40})
				if tc.act != nil {
					tc.act(t, e, rid)
				}
				r := e.wait(rid, kernel.StatusDone, kernel.StatusPartial, kernel.StatusBlocked, kernel.StatusFailed, kernel.StatusBudgetExhausted, kernel.StatusCancelled)
				if r.Status != tc.status {
					e.dumpSteps(rid)
					t.Fatalf("status = %s (%s), want %s", r.Status, r.Result, tc.status)
				}
				if tc.check != nil {
					tc.check(t, e, rid, r)
				}
			})
		}
	})
}

// dedent removes the 4-space indent the scripts above are written with.
func dedent(s string) string {
	lines := strings.Split(strings.TrimPrefix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "    ")
	}
	return strings.Join(lines, "\n")
}

// TestMissingKeyEndsBlocked: a real model without its key blocks the
// mission at once, and the summary says what to do where the mission runs,
// with the mission's real id: a worker's environment and aos mission retry
// on a server; this shell and aos run again for `aos run`.
func TestMissingKeyEndsBlocked(t *testing.T) {
	for _, tc := range []struct {
		name        string
		local       bool
		want, avoid []string
	}{
		{"server", false, []string{"worker's environment", "aos mission retry MID"}, []string{"retry ID", "this shell"}},
		{"local", true, []string{"this shell's environment", "aos run", "mission MID"}, []string{"worker", "retry"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db storetest.DB) {
				e := newEnv(t, db, "name: test\nturns:\n  - text: hi\n")
				e.getenv = func(string) string { return "" } // no ANTHROPIC_API_KEY
				deps := e.deps()
				deps.Local = tc.local
				startWith(t, e, deps)
				// A real model id: scripted models need no key by design.
				rid := e.mission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "claude-haiku-5-5"})
				r := e.wait(rid, kernel.StatusBlocked, kernel.StatusDone, kernel.StatusPartial, kernel.StatusFailed)
				var res kernel.Result
				if err := json.Unmarshal(r.Result, &res); err != nil {
					t.Fatal(err)
				}
				if r.Status != kernel.StatusBlocked || !strings.Contains(res.Summary, "set ANTHROPIC_API_KEY") {
					t.Fatalf("run = %s %q; want blocked naming ANTHROPIC_API_KEY", r.Status, res.Summary)
				}
				for _, w := range tc.want {
					if w = strings.ReplaceAll(w, "MID", e.missionOf(rid)); !strings.Contains(res.Summary, w) {
						t.Errorf("summary %q does not say %q", res.Summary, w)
					}
				}
				for _, a := range tc.avoid {
					if strings.Contains(res.Summary, a) {
						t.Errorf("summary %q says %q", res.Summary, a)
					}
				}
				if len(e.srv.Requests()) != 0 {
					t.Errorf("a request reached the model server without a key")
				}
			})
		})
	}
}

func TestCancelEndsTheMission(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		e := newEnv(t, db, "name: test\nturns:\n  - tool_calls: [{name: shell, input: {command: \"sleep 30\", timeoutSec: 60}}]\n")
		e.start()
		rid := e.mission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:test"})
		deadline := time.Now().Add(30 * time.Second)
		for {
			steps, _ := e.db.Store.ListSteps(context.Background(), rid, -1, 0)
			if n := len(steps); n > 0 && steps[n-1].Kind == "tool_call" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the shell step never started")
			}
			time.Sleep(10 * time.Millisecond)
		}
		start := time.Now()
		if err := e.k.RequestCancel(context.Background(), rid); err != nil {
			t.Fatal(err)
		}
		r := e.wait(rid, kernel.StatusCancelled, kernel.StatusPartial, kernel.StatusFailed)
		if r.Status != kernel.StatusCancelled {
			t.Fatalf("status = %s", r.Status)
		}
		if el := time.Since(start); el > 10*time.Second {
			t.Errorf("cancel took %s; the sandboxed sleep must be killed", el)
		}
	})
}
