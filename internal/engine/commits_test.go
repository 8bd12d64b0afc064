package engine_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
)

// Issue 17: a turn commits at most twice (the tool's intent, and a
// non_idempotent tool's result); the other records of a turn (owner
// messages, the model's result, the policy rules, the policy.decision
// event, a read's or a probed write's result) ride on the next of those
// commits, and the model call announces itself live only (no intent). A
// write_file turn commits once.

// commitCounter is the store's count of committed transactions.
type commitCounter interface{ Commits() uint64 }

// writeTurns is a mission of n turns of one write_file each (an
// idempotent write with a probe: intent and result both commit), then
// finish.
func writeTurns(n int) string {
	var sb strings.Builder
	sb.WriteString("name: test\nturns:\n")
	for i := range n {
		fmt.Fprintf(&sb, "  - tool_calls:\n      - {name: write_file, input: {path: w%d.txt, content: \"turn %d\\n\"}}\n", i, i)
	}
	sb.WriteString("  - tool_calls:\n      - {name: finish, input: {status: partial, summary: done, evidence: [], openQuestions: []}}\n")
	return sb.String()
}

func TestAtMostOneCommitPerWriteTurn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		commits := func(turns int) uint64 {
			e := newEnv(t, storetest.New(t, db.Driver), writeTurns(turns))
			// Every run queued, then claimed: whether a creation is handed
			// to the worker (no claim commit) depends on the worker's loop
			// being ready, and must not differ between the two missions.
			opts := e.opts()
			opts.QueueEveryRun = true
			e.k = kernel.New(e.db.Store, opts)
			cc, ok := e.db.Store.(commitCounter)
			if !ok {
				t.Fatalf("store %T does not count commits", e.db.Store)
			}
			e.start()
			before := cc.Commits()
			rid := e.mission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:test"})
			if r := e.wait(rid, kernel.StatusPartial, kernel.StatusFailed, kernel.StatusBlocked, kernel.StatusWaiting); r.Status != kernel.StatusPartial || r.Turns != turns+1 {
				e.dumpSteps(rid)
				t.Fatalf("run %s after %d turns: %s %s", r.Status, r.Turns, r.Error, r.Result)
			}
			return cc.Commits() - before
		}
		// What a mission costs besides its turns cancels out.
		short, long := commits(2), commits(12)
		perTurn := float64(long-short) / 10
		t.Logf("%s: %d commits for 3 turns, %d for 13: %.1f per write turn", db.Driver, short, long, perTurn)
		// The write's intent, which carries the model's result; the
		// write's result (probed) rides on the next turn's commit, and the
		// model call announces itself live only (LiveAnnounce).
		if perTurn > 1 {
			t.Fatalf("%.1f commits per turn, want ≤ 1", perTurn)
		}
	})
}

const deferredScript = `name: test
turns:
  - tool_calls:
      - {name: shell, input: {command: "echo t1 >> log.txt; echo one"}}
  - expect: [{last_tool_result_contains: "one"}]
    tool_calls:
      - {name: read_file, input: {path: log.txt}}
  - expect: [{last_tool_result_contains: "t1"}]
    tool_calls:
      - {name: shell, input: {command: "echo t2 >> log.txt; echo two"}}
  - expect: [{last_tool_result_contains: "two"}]
    tool_calls:
      - {name: finish, input: {status: partial, summary: "done", evidence: [], openQuestions: []}}
`

// TestCrashWhereACommitWasRemoved kills the worker right after each record
// that no longer commits on its own (it waits for the run's next
// transaction), resumes in a new process, and checks that the mission ends
// as an uninterrupted one: each shell command ran exactly once, no owner
// was asked, the model saw the same conversation.
func TestCrashWhereACommitWasRemoved(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		for _, at := range []string{
			"owner_messages:owner_messages:2", // turn 2's steering read
			"model_call:model:2",              // turn 2's model result
			"policy:policy_rules:3",           // turn 3's rules, before its shell
			"emit:policy.decision:3",          // turn 3's decision to run the shell
			"tool_call:read_file:1",           // a read's result
			"model_call:model:3",              // the result whose decision is the shell
		} {
			t.Run(strings.ReplaceAll(at, ":", "_"), func(t *testing.T) {
				e := newEnv(t, storetest.New(t, db.Driver), deferredScript)
				rid := e.mission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:test"})
				e.killAndResume(t, rid, at, "a question means an effect's record was lost")
				if b, _ := os.ReadFile(filepath.Join(e.branchTree(rid), "log.txt")); string(b) != "t1\nt2\n" {
					t.Errorf("log.txt = %q, want each command's line once", b)
				}
				e.wantUninterrupted(t, rid, 3)
			})
		}
	})
}

// TestCrashWhileAnUnannouncedModelCallRuns kills the worker while a model
// call runs: the call records no intent (kernel.StepSpec.LiveAnnounce; the
// commit its intent was is gone), so what came before it since the last
// commit (turn 2's steering read; turn 3's: the read's result too) was
// announced live only. The resumed run ends as an uninterrupted one: each
// shell command ran once, no owner was asked, the model saw the same
// conversation.
func TestCrashWhileAnUnannouncedModelCallRuns(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		for _, n := range []int{2, 3} {
			t.Run(fmt.Sprint("turn", n), func(t *testing.T) {
				e := newEnv(t, storetest.New(t, db.Driver), deferredScript)
				rid := e.mission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:test"})
				e.killAndResumeEnv(t, rid, fmt.Sprint("AOS_TEST_KILL_EXEC=model_call:model:", n), "a question means an effect's record was lost")
				if b, _ := os.ReadFile(filepath.Join(e.branchTree(rid), "log.txt")); string(b) != "t1\nt2\n" {
					t.Errorf("log.txt = %q, want each command's line once", b)
				}
				e.wantUninterrupted(t, rid, 3)
			})
		}
	})
}

const probedWriteScript = `name: test
turns:
  - tool_calls:
      - {name: write_file, input: {path: notes.txt, content: "one\n"}}
  - expect: [{last_tool_result_error: false}]
    tool_calls:
      - {name: edit_file, input: {path: notes.txt, oldString: "one", newString: "two"}}
  - expect: [{last_tool_result_error: false}]
    tool_calls:
      - {name: git_commit, input: {message: "add notes"}}
  - expect: [{last_tool_result_error: false}, {last_tool_result_contains: "committed"}]
    tool_calls:
      - {name: finish, input: {status: partial, summary: "done", evidence: [], openQuestions: []}}
`

// TestCrashAfterADeferredProbedResult kills the worker right after the
// result of a probed idempotent write (write_file, edit_file, git_commit)
// was recorded: it no longer commits on its own but waits for the run's
// next transaction, so the resumed run finds the step started and its
// probe must settle it. The mission ends as an uninterrupted one: no owner
// was asked, each effect happened once (the edit applied once, one git
// commit), the model saw no error and the journal is gapless.
func TestCrashAfterADeferredProbedResult(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		for _, at := range []string{"tool_call:write_file:1", "tool_call:edit_file:1", "tool_call:git_commit:1"} {
			t.Run(strings.ReplaceAll(at, ":", "_"), func(t *testing.T) {
				e := newEnv(t, storetest.New(t, db.Driver), probedWriteScript)
				rid := e.mission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:test"})
				e.killAndResume(t, rid, at, "a question means the probe did not settle the step")
				if b, err := os.ReadFile(filepath.Join(e.branchTree(rid), "notes.txt")); err != nil || string(b) != "two\n" {
					t.Errorf("notes.txt = %q, %v; want the edit applied once", b, err)
				}
				if n := e.git("rev-list", "--count", "main.."+e.branchOf(rid)); n != "1" {
					t.Errorf("commits on the mission branch = %s, want exactly 1", n)
				}
				e.wantUninterrupted(t, rid, 3)
			})
		}
	})
}

// killAndResume runs a worker child that is killed when the record at is
// written, then one that resumes the run, and waits for the run to end
// partial; another end fails the test, saying why (why).
func (e *env) killAndResume(t *testing.T, rid, at, why string) {
	t.Helper()
	e.killAndResumeEnv(t, rid, "AOS_TEST_KILL_RECORD="+at, why)
}

// killAndResumeEnv is killAndResume with the child's kill set by kill, an
// environment entry (AOS_TEST_KILL_RECORD=… or AOS_TEST_KILL_EXEC=…).
func (e *env) killAndResumeEnv(t *testing.T, rid, kill, why string) {
	t.Helper()
	err := e.runChild(t, rid, kill)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
		t.Fatalf("child was not killed (%s): %v", kill, err)
	}
	if err := e.runChild(t, rid); err != nil {
		t.Fatalf("resuming child: %v", err)
	}
	r := e.wait(rid, kernel.StatusPartial, kernel.StatusFailed, kernel.StatusBlocked, kernel.StatusWaiting)
	if r.Status != kernel.StatusPartial {
		e.dumpSteps(rid)
		t.Fatalf("status %s (%s): %s %s", r.Status, why, r.Error, r.Result)
	}
}

// wantUninterrupted checks what a resumed run shares with one never
// interrupted: the model's last request carries results tool results,
// and the journal is gapless, every step completed.
func (e *env) wantUninterrupted(t *testing.T, rid string, results int) {
	t.Helper()
	reqs := e.srv.Requests()
	if n := strings.Count(string(reqs[len(reqs)-1].Body), `"type":"tool_result"`); n != results {
		t.Errorf("final request has %d tool results, want %d", n, results)
	}
	steps, err := e.db.Store.ListSteps(context.Background(), rid, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		if s.Seq != i || s.Status != "completed" {
			t.Errorf("step %d: seq %d %s %s/%s, want a gapless completed journal", i, s.Seq, s.Status, s.Kind, s.Name)
		}
	}
}
