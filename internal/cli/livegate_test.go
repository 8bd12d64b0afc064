package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/mission"
)

// TestWatchPlacesLiveTextInOrder: the live text of a turn (transient
// model.delta events) reaches the watcher before the previous turn's
// persisted tool-call events, as it does when the worker's transient
// events outrun the persisted ones. The timeline still prints each turn's
// text after the previous turn's tool results, once, as re-watching it
// does; a delta that arrives after its step completed is not printed again.
func TestWatchPlacesLiveTextInOrder(t *testing.T) {
	const run = "run-1"
	seq := func(n int) *int { return &n }
	ev := func(kind string, s *int, payload any) mission.Event {
		b, err := json.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		return mission.Event{ID: 1, MissionID: "m", RunID: run, Seq: s, Kind: kind, Payload: b}
	}
	modelStarted := func(s, turn int) mission.Event {
		return ev("step.started", seq(s), map[string]any{"seq": s, "kind": "model_call", "name": "model", "request": map[string]any{"turn": turn}})
	}
	modelDone := func(s int, text string) mission.Event {
		return ev("step.completed", seq(s), map[string]any{"seq": s, "kind": "model_call", "name": "model",
			"result": map[string]any{"blocks": []map[string]any{{"type": "text", "text": text}}}})
	}
	toolStarted := func(s int, file string) mission.Event {
		return ev("step.started", seq(s), map[string]any{"seq": s, "kind": "tool_call", "name": "read_file", "request": map[string]any{"input": map[string]string{"path": file}}})
	}
	toolDone := func(s int, content string) mission.Event {
		return ev("step.completed", seq(s), map[string]any{"seq": s, "kind": "tool_call", "name": "read_file", "result": map[string]any{"ok": true, "content": content}})
	}
	delta := func(turn int, text string) mission.Event {
		d := ev("model.delta", nil, map[string]any{"turn": turn, "type": "text", "text": text})
		d.ID = -1
		return d
	}
	reset := func(turn int) mission.Event {
		d := ev("model.delta", nil, map[string]any{"turn": turn, "reset": true})
		d.ID = -1
		return d
	}
	for _, tc := range []struct {
		name   string
		events []mission.Event
	}{
		{"deltas in their place", []mission.Event{
			modelStarted(1, 0), reset(0), delta(0, "Reading the code."), modelDone(1, "Reading the code."),
			toolStarted(2, "calc.sh"), toolStarted(3, "test.sh"), toolDone(2, "CALC-BODY"), toolDone(3, "TEST-BODY"),
			modelStarted(4, 1), reset(1), delta(1, "Running "), delta(1, "the test."), modelDone(4, "Running the test."),
		}},
		{"the next turn's deltas before the previous turn's tool results", []mission.Event{
			modelStarted(1, 0), reset(0), delta(0, "Reading the code."), modelDone(1, "Reading the code."),
			toolStarted(2, "calc.sh"), toolStarted(3, "test.sh"),
			reset(1), delta(1, "Running "), // the worker's transient events outran these:
			toolDone(2, "CALC-BODY"), toolDone(3, "TEST-BODY"),
			modelStarted(4, 1), delta(1, "the test."), modelDone(4, "Running the test."),
			delta(1, "the test."), // a straggler after its step completed
		}},
		{"a turn's text entirely before its step.started", []mission.Event{
			modelStarted(1, 0), delta(0, "Reading the code."), modelDone(1, "Reading the code."),
			toolStarted(2, "calc.sh"), toolStarted(3, "test.sh"),
			reset(1), delta(1, "Running "), delta(1, "the test."),
			toolDone(2, "CALC-BODY"), toolDone(3, "TEST-BODY"), modelStarted(4, 1), modelDone(4, "Running the test."),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			w := &watcher{out: &out, err: &out, pr: &eventPrinter{out: &out}, missionID: "m", rootRun: run, gate: newLiveGate()}
			for _, e := range tc.events {
				if err := w.event(context.Background(), e); err != nil {
					t.Fatal(err)
				}
			}
			w.pr.printf("")
			got := out.String()
			order := []string{"Reading the code.", "read_file", "read_file", "CALC-BODY", "TEST-BODY", "Running the test."}
			at := 0
			for _, want := range order {
				i := strings.Index(got[at:], want)
				if i < 0 {
					t.Fatalf("%q is missing or out of order in the timeline:\n%s", want, got)
				}
				at += i + len(want)
			}
			if n := strings.Count(got, "the test."); n != 1 {
				t.Fatalf("the second turn's text is printed %d times:\n%s", n, got)
			}
		})
	}
}

// TestWatchPlacesEngineEventsInOrder: aos mission watch shows an external
// engine's live events (transient engine.event) as aos run does: one that
// outran its run's persisted engine.started after it, one during the run
// at once, and one after engine.finished not at all.
func TestWatchPlacesEngineEventsInOrder(t *testing.T) {
	const run = "run-1"
	ev := func(kind string, id int64, payload any) mission.Event {
		b, err := json.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		return mission.Event{ID: id, MissionID: "m", RunID: run, Kind: kind, Payload: b}
	}
	call := func(tool string) mission.Event {
		return ev("engine.event", -1, map[string]any{"engine": "codex", "type": "tool_call", "tool": tool, "input": "x"})
	}
	events := []mission.Event{
		call("early"), // outran engine.started
		ev("engine.started", 1, map[string]any{"engine": "codex", "branch": "aos/m", "base": "abc"}),
		call("during"),
		ev("engine.finished", 2, map[string]any{"status": "COMPLETED", "summary": "done"}),
		call("late"), // after the end: dropped
	}
	var out bytes.Buffer
	w := &watcher{out: &out, err: &out, pr: &eventPrinter{out: &out}, missionID: "m", rootRun: run, gate: newLiveGate()}
	for _, e := range events {
		if err := w.event(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	got := out.String()
	at := 0
	for _, want := range []string{"▶ engine codex", "→ codex early", "→ codex during", "◀ engine COMPLETED"} {
		i := strings.Index(got[at:], want)
		if i < 0 {
			t.Fatalf("%q is missing or out of order in the timeline:\n%s", want, got)
		}
		at += i + len(want)
	}
	if strings.Contains(got, "late") {
		t.Fatalf("an engine event after engine.finished was shown:\n%s", got)
	}
}

// TestWatchShowsLiveCopiesOnce: the agent loop's model call announces
// itself live only (kernel.StepSpec.LiveAnnounce), after live copies of the
// run's step events since its last announce, committed or not. The watcher
// shows whichever of a copy and its persisted event comes first, the
// model's text after it, and not the other, unless a resumed holder (whose
// run.claimed replays steps) persisted it after running the step again.
// With --json (no copies kept) every event is shown.
func TestWatchShowsLiveCopiesOnce(t *testing.T) {
	const run = "run-1"
	ev := func(id int64, kind string, s int, payload any) mission.Event {
		return stepEvent(t, run, id, kind, s, payload)
	}
	toolStarted := ev(1, "step.started", 2, map[string]any{"seq": 2, "kind": "tool_call", "name": "read_file", "request": map[string]any{"input": map[string]string{"path": "calc.sh"}}})
	toolDone := func(id int64, body string) mission.Event {
		return ev(id, "step.completed", 2, map[string]any{"seq": 2, "kind": "tool_call", "name": "read_file", "result": map[string]any{"ok": true, "content": body}})
	}
	modelStarted := ev(-1, "step.started", 4, map[string]any{"seq": 4, "kind": "model_call", "name": "model", "request": map[string]any{"turn": 1}})
	delta := func(text string) mission.Event {
		return ev(-1, "model.delta", 0, map[string]any{"turn": 1, "type": "text", "text": text})
	}
	modelDone := ev(3, "step.completed", 4, map[string]any{"seq": 4, "kind": "model_call", "name": "model",
		"result": map[string]any{"blocks": []map[string]any{{"type": "text", "text": "Running the test."}}}})
	resumed := ev(2, "run.claimed", 0, map[string]any{"runId": run, "replaySteps": 3})
	truncated := ev(-1, "step.completed", 2, map[string]any{"seq": 2, "kind": "tool_call", "name": "read_file", "truncated": true})
	// The run's previous model call, announced live, then completed.
	prior := ev(-1, "step.started", 1, map[string]any{"seq": 1, "kind": "model_call", "name": "model", "request": map[string]any{"turn": 0}})
	priorDone := ev(5, "step.completed", 1, map[string]any{"seq": 1, "kind": "model_call", "name": "model",
		"result": map[string]any{"blocks": []map[string]any{{"type": "text", "text": "Looking."}}}})
	for _, tc := range []struct {
		name   string
		json   bool
		events []mission.Event
		bodies int // times the tool's result is shown
	}{
		{"a copy, then its persisted event", false, []mission.Event{toolStarted, toolDone(-1, "CALC-BODY"), modelStarted, delta("Running "), delta("the test."), toolDone(2, "CALC-BODY"), modelDone}, 1},
		{"a persisted event, then its copy", false, []mission.Event{prior, priorDone, toolStarted, toolDone(2, "CALC-BODY"), toolDone(-1, "CALC-BODY"), modelStarted, delta("Running "), delta("the test."), modelDone}, 1},
		// The next call's start waits for the persisted event of a copy
		// that went without its body (the kernel commits it first), then
		// its text streams (no completion here to print it).
		{"a copy too large to travel live", false, []mission.Event{toolStarted, truncated,
			modelStarted, delta("Running "), delta("the test."), toolDone(2, "CALC-BODY")}, 1},
		// Nothing to wait for.
		{"a copy too large to travel live, after its persisted event", false, []mission.Event{prior, priorDone, toolStarted, toolDone(2, "CALC-BODY"), truncated,
			modelStarted, delta("Running "), delta("the test.")}, 1},
		{"the persisted event of a resumed holder", false, []mission.Event{toolStarted, toolDone(-1, "CALC-BODY"), modelStarted, delta("Running "), resumed, toolDone(4, "CALC-BODY"), modelDone}, 2},
		{"--json", true, []mission.Event{toolStarted, toolDone(-1, "CALC-BODY"), modelStarted, delta("Running "), delta("the test."), toolDone(2, "CALC-BODY"), modelDone}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := feedWatch(t, run, tc.json, tc.events)
			if n := strings.Count(got, "CALC-BODY"); n != tc.bodies {
				t.Fatalf("the tool's result is shown %d times, want %d:\n%s", n, tc.bodies, got)
			}
			if tc.json {
				return
			}
			if i, j := strings.Index(got, "CALC-BODY"), strings.Index(got, "Running "); i < 0 || j < i {
				t.Fatalf("the model's text is not after the previous turn's result:\n%s", got)
			}
			if n := strings.Count(got, "Running "); n != 1 {
				t.Fatalf("the model's text is shown %d times:\n%s", n, got)
			}
		})
	}
}

// TestWatchOpensACallAfterThePreviousOne: a model call's live step.started
// can outrun the previous call's persisted step.completed (a turn without
// tool calls: that result commits just before the next call is announced,
// and its event travels the slower path). The watcher opens the new call
// after the previous one completed, so each turn's text is printed once:
// streamed, not again from its step's result.
func TestWatchOpensACallAfterThePreviousOne(t *testing.T) {
	const run = "run-1"
	started := func(s, turn int) mission.Event { return modelStarted(t, run, s, turn) }
	done := func(id int64, s int, text string) mission.Event { return modelDone(t, run, id, s, text) }
	delta := func(turn int, text string) mission.Event { return textDelta(t, run, turn, text) }
	got, _ := feedWatch(t, run, false, []mission.Event{
		started(1, 0), delta(0, "Looking around."),
		started(2, 1), delta(1, "Now the fix."), // before turn 0's result arrives
		done(1, 1, "Looking around."), done(2, 2, "Now the fix."),
	})
	for _, text := range []string{"Looking around.", "Now the fix."} {
		if n := strings.Count(got, text); n != 1 {
			t.Fatalf("%q is printed %d times:\n%s", text, n, got)
		}
	}
	if strings.Index(got, "Looking around.") > strings.Index(got, "Now the fix.") {
		t.Fatalf("the turns' text is out of order:\n%s", got)
	}
}

// feedWatch passes events through a watcher of run (that keeps copies,
// unless asJSON) and returns what it printed and its gate.
func feedWatch(t *testing.T, run string, asJSON bool, events []mission.Event) (string, *liveGate) {
	t.Helper()
	var out bytes.Buffer
	w := &watcher{out: &out, err: &out, pr: &eventPrinter{out: &out, quiet: asJSON}, missionID: "m", rootRun: run, gate: newLiveGate(), json: asJSON}
	if !asJSON {
		w.gate.copies = map[string]bool{}
	}
	for _, e := range events {
		if err := w.event(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	w.pr.printf("")
	return out.String(), w.gate
}

// modelStarted is the live step.started of run's model call s of turn.
func modelStarted(t *testing.T, run string, s, turn int) mission.Event {
	return stepEvent(t, run, -1, "step.started", s, map[string]any{"seq": s, "kind": "model_call", "name": "model", "request": map[string]any{"turn": turn}})
}

// modelDone is the step.completed of run's model call s (a copy with id
// -1), whose result holds text.
func modelDone(t *testing.T, run string, id int64, s int, text string) mission.Event {
	return stepEvent(t, run, id, "step.completed", s, map[string]any{"seq": s, "kind": "model_call", "name": "model",
		"result": map[string]any{"blocks": []map[string]any{{"type": "text", "text": text}}}})
}

// textDelta is a live model.delta of run's turn.
func textDelta(t *testing.T, run string, turn int, text string) mission.Event {
	return stepEvent(t, run, -1, "model.delta", 0, map[string]any{"turn": turn, "type": "text", "text": text})
}

// stepEvent is an event of run: persisted (id > 0, with seq s) or live
// (id -1, its seq in its payload only, as the API sends transient events).
func stepEvent(t *testing.T, run string, id int64, kind string, s int, payload any) mission.Event {
	t.Helper()
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	e := mission.Event{ID: id, MissionID: "m", RunID: run, Kind: kind, Payload: b}
	if id > 0 {
		e.Seq = &s
	}
	return e
}

// TestWatchWaitsForALargeResultExactly: a model call that starts before
// the persisted event of a copy too large to travel live opens after that
// very event, although a run's persisted events do not come in seq order
// (parallel tool calls commit their intents apart); a held call that ends
// before it opens prints its text from its result, and the run's next call
// streams.
func TestWatchWaitsForALargeResultExactly(t *testing.T) {
	const run = "run-1"
	ev := func(id int64, kind string, s int, payload any) mission.Event {
		return stepEvent(t, run, id, kind, s, payload)
	}
	read := func(id int64, kind string, s int, body string) mission.Event {
		p := map[string]any{"seq": s, "kind": "tool_call", "name": "read_file", "request": map[string]any{"input": map[string]string{"path": "f"}}}
		switch {
		case kind == "step.completed" && body == "":
			p = map[string]any{"seq": s, "kind": "tool_call", "name": "read_file", "truncated": true}
		case kind == "step.completed":
			p["result"] = map[string]any{"ok": true, "content": body}
		}
		return ev(id, kind, s, p)
	}
	started := func(s, turn int) mission.Event { return modelStarted(t, run, s, turn) }
	done := func(id int64, s int, text string) mission.Event { return modelDone(t, run, id, s, text) }
	delta := func(turn int, text string) mission.Event { return textDelta(t, run, turn, text) }
	for _, tc := range []struct {
		name   string
		events []mission.Event
		order  []string // in this order, each once
	}{
		{"persisted events out of seq order", []mission.Event{
			started(1, 0), delta(0, "Reading both."), done(-1, 1, "Reading both."),
			// The small read (seq 3) commits its start and result before
			// the big one (seq 2) starts.
			read(1, "step.started", 3, ""), read(2, "step.completed", 3, "SMALL-BODY"), read(3, "step.started", 2, ""),
			read(-1, "step.completed", 2, ""), started(4, 1), delta(1, "Both are read."),
			read(4, "step.completed", 2, "BIG-BODY"),
		}, []string{"Reading both.", "SMALL-BODY", "BIG-BODY", "Both are read."}},
		{"a held call that ends before it opens", []mission.Event{
			started(1, 0), delta(0, "Reading."), done(-1, 1, "Reading."),
			read(1, "step.started", 2, ""), read(-1, "step.completed", 2, ""),
			started(3, 1), delta(1, "Quick answer."), done(-1, 3, "Quick answer."),
			read(2, "step.completed", 2, "BIG-BODY"),
			started(4, 2), delta(2, "Streaming on."),
		}, []string{"Reading.", "Quick answer.", "BIG-BODY", "Streaming on."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, g := feedWatch(t, run, false, tc.events)
			assertInOrder(t, got, tc.order)
			for _, text := range tc.order {
				if n := strings.Count(got, text); n != 1 {
					t.Fatalf("%q is printed %d times:\n%s", text, n, got)
				}
			}
			if len(g.held) != 0 || g.nHeld != 0 || len(g.next) != 0 || len(g.awaiting) != 0 {
				t.Fatalf("the gate still holds text %v (%d), calls %v, awaits %v", g.held, g.nHeld, g.next, g.awaiting)
			}
		})
	}
}
