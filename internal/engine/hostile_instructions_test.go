package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
)

const instructionsAttackScript = `scripts:
  - name: attack
    turns:
      - tool_calls:
          - {name: shell, input: {command: "ln -s /proc/self/environ AGENTS.md; ln -s /proc/self/environ agents.MD; mkdir .AOS; true", timeoutSec: 10}}
      - tool_calls:
          - {name: finish, input: {status: partial, summary: "planted", evidence: [], openQuestions: []}}
  - name: victim
    turns:
      - tool_calls:
          - {name: finish, input: {status: partial, summary: "read the prompt", evidence: [], openQuestions: []}}
`

// TestShellCannotPlantInstructions is issue 10 class 2 end to end, with
// the real sandbox: one mission's shell symlinks AGENTS.md (and a case
// variant) to /proc/self/environ in a repository without one; the next
// mission's system prompt, as the model server received it, must not carry
// the worker's environment. Positive control: the owner's CLAUDE.md is in
// that prompt.
func TestShellCannotPlantInstructions(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		e := newEnv(t, db, instructionsAttackScript)
		if err := os.WriteFile(filepath.Join(e.ws, "CLAUDE.md"), []byte("owner-rule-5e1f: run the tests"), 0o644); err != nil {
			t.Fatal(err)
		}
		gitIn(t, e.ws, "add", "CLAUDE.md")
		gitIn(t, e.ws, "-c", "user.name=o", "-c", "user.email=o@o", "commit", "-q", "-m", "instructions")
		e.start()
		rid := e.mission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:attack"})
		e.wait(rid, kernel.StatusPartial)
		// Whatever the worktree held at the end was committed on the
		// mission branch: the planted names must not be there.
		tree := e.git("ls-tree", "--name-only", e.branchOf(rid))
		for _, n := range []string{"AGENTS.md", "agents.MD", ".AOS"} {
			if strings.Contains("\n"+tree+"\n", "\n"+n+"\n") {
				t.Errorf("%s left in the workspace after the command", n)
			}
		}
		before := len(e.srv.Requests())
		rid = e.mission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:victim"})
		e.wait(rid, kernel.StatusPartial)
		reqs := e.srv.Requests()[before:]
		if len(reqs) == 0 {
			t.Fatal("the victim mission sent no request")
		}
		body := string(reqs[0].Body)
		for _, leak := range []string{"PATH=/", "HOME=/"} {
			if strings.Contains(body, leak) {
				t.Errorf("the system prompt carries the worker's environment (%q)", leak)
			}
		}
		if !strings.Contains(body, "owner-rule-5e1f") {
			t.Errorf("positive control: the owner's CLAUDE.md is not in the prompt")
		}
	})
}
