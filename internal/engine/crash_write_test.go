package engine_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
)

const writeReplayScript = `name: test
turns:
  - tool_calls:
      - {name: write_file, input: {path: cfg.ini, content: "a=1\n"}}
  - expect: [{last_tool_result_error: false}]
    tool_calls:
      - {name: read_file, input: {path: cfg.ini}}
  - tool_calls:
      - {name: edit_file, input: {path: cfg.ini, oldString: "a=1", newString: "a=2"}}
  - expect: [{last_tool_result_error: false}]
    tool_calls:
      - {name: write_file, input: {path: cfg.ini, content: "a=3\n"}}
  - expect: [{last_tool_result_error: false}]
    tool_calls:
      - {name: finish, input: {status: partial, summary: "written", evidence: [], openQuestions: []}}
`

// TestWriteReplayAfterKill is issue 11 item 3 end to end: the worker is
// SIGKILLed right after write_file or edit_file executed (the rename
// happened) and before its result was journaled; a new process resumes.
// The replayed call must succeed (the script asserts the model sees no
// error) and the file holds the edit exactly once. Before, the replay
// failed the staleness check ("exists but this run has not read it yet",
// "changed since this run last read or wrote it"). A later write to the
// same file must pass too: a call settled by its probe records what the run
// now knows of the file, as an executed call would.
func TestWriteReplayAfterKill(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		for _, kill := range []string{"write_file", "edit_file"} {
			t.Run("kill_after_"+kill, func(t *testing.T) {
				e := newEnv(t, storetest.New(t, db.Driver), writeReplayScript)
				rid := e.mission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:test"})
				child := func(extra ...string) error { return e.runChild(t, rid, extra...) }
				err := child("AOS_TEST_KILL_TOOL=" + kill)
				var ee *exec.ExitError
				if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() {
					t.Fatalf("first child was not killed: %v", err)
				}
				if err := child(); err != nil {
					t.Fatalf("resuming child: %v", err)
				}
				r := e.wait(rid, kernel.StatusPartial, kernel.StatusFailed, kernel.StatusBlocked, kernel.StatusWaiting)
				if r.Status != kernel.StatusPartial {
					e.dumpSteps(rid)
					t.Fatalf("status %s: %s", r.Status, r.Result)
				}
				if b, err := os.ReadFile(filepath.Join(e.branchTree(rid), "cfg.ini")); err != nil || string(b) != "a=3\n" {
					t.Errorf("cfg.ini = %q, %v", b, err)
				}
			})
		}
	})
}
