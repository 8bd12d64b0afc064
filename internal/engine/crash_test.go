package engine_test

import (
	"context"
	"encoding/json"
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

const batchScript = `name: test
turns:
  - tool_calls:
      - {name: read_file, input: {path: calc.sh}}
      - {name: read_file, input: {path: test.sh}}
      - {name: write_file, input: {path: out.txt, content: "written once\n"}}
      - {name: git_commit, input: {message: "add out.txt"}}
  - expect: [{tool_results: 4}, {last_tool_result_error: false}]
    tool_calls:
      - {name: finish, input: {status: partial, summary: "batch done", evidence: [], openQuestions: []}}
`

// TestCrashInTheMiddleOfAToolBatch kills the worker process with SIGKILL
// right after a write of a parallel batch executed and before its result
// was committed, resumes in a new process, and checks that the mission ends
// as an uninterrupted one does, with each write effect exactly once.
func TestCrashInTheMiddleOfAToolBatch(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		for _, kill := range []string{"", "write_file", "git_commit"} {
			t.Run("kill_after_"+orNone(kill), func(t *testing.T) {
				e := newEnv(t, storetest.New(t, db.Driver), batchScript)
				rid := e.mission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:test"})
				child := func(extra ...string) error { return e.runChild(t, rid, extra...) }
				if kill != "" {
					err := child("AOS_TEST_KILL_TOOL=" + kill)
					var ee *exec.ExitError
					if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
						t.Fatalf("first child was not killed: %v", err)
					}
				}
				if err := child(); err != nil {
					t.Fatalf("resuming child: %v", err)
				}
				r := e.wait(rid, kernel.StatusPartial, kernel.StatusFailed, kernel.StatusBlocked, kernel.StatusWaiting)
				if r.Status != kernel.StatusPartial {
					e.dumpSteps(rid)
					t.Fatalf("status %s: %s", r.Status, r.Result)
				}
				if b, err := os.ReadFile(filepath.Join(e.branchTree(rid), "out.txt")); err != nil || string(b) != "written once\n" {
					t.Errorf("out.txt = %q, %v", b, err)
				}
				if n := e.git("rev-list", "--count", "main.."+e.branchOf(rid)); n != "1" {
					t.Errorf("commits on the mission branch = %s, want exactly 1", n)
				}
				// The final model request carries the same conversation as an
				// uninterrupted run: 4 results in one batch, then finish.
				reqs := e.srv.Requests()
				last := string(reqs[len(reqs)-1].Body)
				// git_commit's result is the commit, also when a resume found
				// it by its trailer instead of committing again.
				if head := e.git("rev-parse", e.branchOf(rid)); !strings.Contains(last, "committed "+head) {
					i := strings.LastIndex(last, `"type":"tool_result"`)
					t.Errorf("final request does not report the commit %s to the model; its last tool result: %.300s", head, last[max(i, 0):])
				}
				if strings.Count(last, `"type":"tool_result"`) != 4 || strings.Count(last, `"role":"assistant"`) != 1 {
					t.Errorf("final request has %d tool results and %d assistant turns, want 4 and 1", strings.Count(last, `"type":"tool_result"`), strings.Count(last, `"role":"assistant"`))
				}
			})
		}
	})
}

const shellScript = `name: test
turns:
  - tool_calls:
      - {name: shell, input: {command: "echo step-1 >> log.txt; echo appended"}}
  - expect: [{last_tool_result_error: false}, {last_tool_result_contains: "%s"}]
    tool_calls:
      - {name: finish, input: {status: partial, summary: "shell done", evidence: [], openQuestions: []}}
`

// TestShellKilledAfterItRan kills the worker right after a shell command
// ran, before its result was committed. Its captured result is found on
// resume and the model reads the real output, with no question. If the
// capture is lost too (a kill between the command's end and the capture's
// write), the owner is asked; "it ran" reaches the model as a truthful
// success, not an empty error. The command runs once either way.
func TestShellKilledAfterItRan(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		for _, tc := range []struct {
			name       string
			loseOutput bool
			modelReads string
		}{
			{"captured", false, "appended"},
			{"capture_lost", true, "ran before a crash; its output was not captured; the owner confirmed it ran"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := newEnv(t, storetest.New(t, db.Driver), fmt.Sprintf(shellScript, tc.modelReads))
				rid := e.mission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:test"})
				env := append(os.Environ(), "AOS_TEST_CHILD=engine", "AOS_TEST_DSN="+e.db.DSN, "AOS_TEST_DATA="+e.dir,
					"AOS_TEST_RUN="+rid, "AOS_TEST_MODEL_URL="+e.srv.URL())
				child := func(extra ...string) error {
					cmd := exec.Command(os.Args[0], "-test.run=^$")
					cmd.Env = append(env, extra...)
					cmd.Stderr = os.Stderr
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = cmd.Process.Kill() })
					return cmd.Wait()
				}
				if err := child("AOS_TEST_KILL_TOOL=shell"); err == nil {
					t.Fatal("first child was not killed")
				}
				if tc.loseOutput {
					if err := os.RemoveAll(filepath.Join(e.dir, "shell-results")); err != nil {
						t.Fatal(err)
					}
				}
				if err := child(); err != nil {
					t.Fatalf("resuming child: %v", err)
				}
				if tc.loseOutput {
					w := e.pendingWait(rid)
					var p struct {
						Text    string `json:"text"`
						Tool    string `json:"tool"`
						Summary string `json:"summary"`
						Input   struct {
							Command string `json:"command"`
						} `json:"input"`
						Answers []struct{ Answer, Consequence string } `json:"answers"`
					}
					if err := json.Unmarshal(w.Payload, &p); err != nil {
						t.Fatal(err)
					}
					cmd := "echo step-1 >> log.txt; echo appended"
					if p.Tool != "shell" || p.Input.Command != cmd || !strings.Contains(p.Text, cmd) ||
						!strings.Contains(p.Text, "there is none for this one") || len(p.Answers) != 3 || p.Answers[0].Consequence == "" {
						t.Fatalf("reconcile question = %s", w.Payload)
					}
					if _, err := e.k.ResolveWait(context.Background(), w.ID, kernel.ReconcileRan, "owner"); err != nil {
						t.Fatal(err)
					}
					if err := child(); err != nil {
						t.Fatalf("child after the answer: %v", err)
					}
				}
				if r := e.wait(rid, kernel.StatusPartial, kernel.StatusFailed, kernel.StatusBlocked, kernel.StatusWaiting); r.Status != kernel.StatusPartial {
					e.dumpSteps(rid)
					t.Fatalf("status %s: %s %s", r.Status, r.Error, r.Result)
				}
				if b, _ := os.ReadFile(filepath.Join(e.branchTree(rid), "log.txt")); string(b) != "step-1\n" {
					t.Errorf("log.txt = %q, want the line once", b)
				}
			})
		}
	})
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}
