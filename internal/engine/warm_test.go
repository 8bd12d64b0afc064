package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
)

// sandboxProcs lists live host processes whose command line names dir:
// a run's bwrap names the data dir it hides (and its init dies with it).
func sandboxProcs(dir string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if i := strings.LastIndexByte(string(st), ')'); i < 0 || i+2 >= len(st) || st[i+2] == 'Z' {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if strings.Contains(string(cmd), "bwrap") && strings.Contains(string(cmd), dir) {
			out = append(out, e.Name())
		}
	}
	return out
}

// shellResults returns the run's shell results, in order.
func shellResults(t *testing.T, e *env, rid string) []string {
	t.Helper()
	steps, err := e.db.Store.ListSteps(context.Background(), rid, -1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range steps {
		if s.Kind == "tool_call" && s.Name == "shell" && s.Status == "completed" {
			out = append(out, string(s.Result))
		}
	}
	return out
}

// TestWarmSandboxLivesWithTheRunLogic checks, from the host, that the
// shell's commands share one warm sandbox per run and that nothing of it
// is left once the run ends, pauses on a durable wait, or its worker
// stops.
func TestWarmSandboxLivesWithTheRunLogic(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		// Both commands print the init's pid inside, and pid 2's command
		// line: the same box runs them.
		warm := `      - tool_calls: [{name: shell, input: {command: "tr '\\0' ' ' < /proc/2/cmdline; echo; echo box-$(readlink /proc/self/ns/pid)", timeoutSec: 10}}]
      - tool_calls: [{name: shell, input: {command: "echo box-$(readlink /proc/self/ns/pid)", timeoutSec: 10}}]
`
		for _, c := range []struct {
			name, tail string
			act        func(t *testing.T, e *env, rid string, stop func())
		}{
			{"run ends", "      - tool_calls: [{name: finish, input: {status: partial, summary: s, evidence: null, openQuestions: null}}]\n",
				func(t *testing.T, e *env, rid string, _ func()) {
					e.wait(rid, kernel.StatusPartial)
				}},
			{"durable wait", "      - tool_calls: [{name: ask_owner, input: {question: \"ready?\", options: null}}]\n",
				func(t *testing.T, e *env, rid string, _ func()) {
					e.pendingWait(rid)
					e.wait(rid, kernel.StatusWaiting)
				}},
			{"worker stops", "      - stall: true\n",
				func(t *testing.T, e *env, rid string, stop func()) {
					waitUntil(t, 30*time.Second, "the box to stay up while the model stalls", func() bool {
						return len(shellResults(t, e, rid)) == 2 && len(sandboxProcs(e.dir)) > 0
					})
					// bwrap, its pid 1 and the init, by host pid.
					var tree []string
					for _, p := range sandboxProcs(e.dir) {
						tree = append(tree, descendants(p)...)
					}
					if !hasInit(tree) {
						t.Fatalf("no init under the box's bwrap: %v", tree)
					}
					stop()
					waitUntil(t, 10*time.Second, "bwrap, its pid 1 and the init to be gone", func() bool { return len(alive(tree)) == 0 })
				}},
		} {
			t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
				e := newEnv(t, storetest.New(t, db.Driver), "name: test\nturns:\n"+warm+c.tail)
				stop := e.start()
				rid := e.mission(engine.Input{Objective: "o", Criteria: []string{"c"}, Model: "script:test", Network: "none"})
				c.act(t, e, rid, stop)
				res := shellResults(t, e, rid)
				if len(res) != 2 || !strings.Contains(res[0], "__sandbox-init") {
					t.Fatalf("the shell did not run in a warm sandbox: %q", res)
				}
				first, second := boxOf(res[0]), boxOf(res[1])
				if first == "" || first != second {
					t.Errorf("the two commands ran in different boxes: %q then %q", first, second)
				}
				waitUntil(t, 10*time.Second, "no sandbox process left", func() bool { return len(sandboxProcs(e.dir)) == 0 })
			})
		}
	})
}

func waitUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// boxOf returns the PID namespace a result's "box-" line names.
func boxOf(result string) string {
	i := strings.Index(result, "box-pid:[")
	if i < 0 {
		return ""
	}
	rest := result[i:]
	if j := strings.IndexByte(rest, ']'); j > 0 {
		return rest[:j+1]
	}
	return ""
}

// descendants returns pid and every process below it, by host pid.
func descendants(pid string) []string {
	out := []string{pid}
	tasks, _ := os.ReadDir(filepath.Join("/proc", pid, "task"))
	for _, t := range tasks {
		b, _ := os.ReadFile(filepath.Join("/proc", pid, "task", t.Name(), "children"))
		for _, c := range strings.Fields(string(b)) {
			out = append(out, descendants(c)...)
		}
	}
	return out
}

func hasInit(pids []string) bool {
	for _, p := range pids {
		b, _ := os.ReadFile(filepath.Join("/proc", p, "cmdline"))
		if strings.Contains(string(b), "__sandbox-init") {
			return true
		}
	}
	return false
}

// alive returns the pids that still run (zombies excluded).
func alive(pids []string) []string {
	var out []string
	for _, p := range pids {
		st, err := os.ReadFile(filepath.Join("/proc", p, "stat"))
		if err != nil {
			continue
		}
		if i := strings.LastIndexByte(string(st), ')'); i > 0 && i+2 < len(st) && st[i+2] != 'Z' {
			out = append(out, p)
		}
	}
	return out
}
