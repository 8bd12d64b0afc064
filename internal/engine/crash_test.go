package engine_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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
				env := append(os.Environ(), "AOS_TEST_CHILD=engine", "AOS_TEST_DSN="+e.db.DSN, "AOS_TEST_DATA="+e.dir,
					"AOS_TEST_RUN="+rid, "AOS_TEST_MODEL_URL="+e.srv.URL())
				child := func(extra ...string) error {
					cmd := exec.Command(os.Args[0], "-test.run=^$")
					cmd.Env = append(env, extra...)
					cmd.Stderr = os.Stderr
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					done := make(chan error, 1)
					go func() { done <- cmd.Wait() }()
					select {
					case err := <-done:
						return err
					case <-time.After(60 * time.Second):
						_ = cmd.Process.Kill()
						t.Fatal("child did not finish")
						return nil
					}
				}
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
				if strings.Count(last, `"type":"tool_result"`) != 4 || strings.Count(last, `"role":"assistant"`) != 1 {
					t.Errorf("final request has %d tool results and %d assistant turns, want 4 and 1", strings.Count(last, `"type":"tool_result"`), strings.Count(last, `"role":"assistant"`))
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
