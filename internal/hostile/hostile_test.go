package hostile

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/provider/script"
)

// attack is one entry of the suite: scripted missions that try to get out
// (or, for a control, do the same thing harmlessly and must succeed), and
// what to check from outside besides the checks every attack gets.
type attack struct {
	name  string
	class string // which class of issue 10 it belongs to (see classes)
	// control marks a positive control: the same mission shape without the
	// attack; its check asserts that it worked, and any finding fails it.
	control bool
	// drivers to run on; nil means SQLite only.
	drivers []string
	// setup prepares the world after its layout and before the missions.
	setup func(w *world)
	// missions run one after the other (see mission.concurrent).
	missions []mission
	// during runs alongside the missions until the last one ends (a
	// concurrent swapper, a listener).
	during func(ctx context.Context, w *world)
	// check adds findings (for an attack) or asserts success (for a
	// control, with w.t.Errorf) after the missions.
	check func(w *world, f *findings)
	// env is added to aos's environment (say, the sandbox's limits).
	env []string
	// mayRefuse: a hardened aos may refuse the mission before it calls the
	// model at all (a project that is not a git repository, say).
	mayRefuse bool
}

// mission is one `aos run`.
type mission struct {
	turns   []script.Turn // the finish turn is appended
	summary string        // the finish summary ("done")
	network string        // none (default) or open
	// approve runs with --on-ask wait and approves every approval from
	// another process with `aos approve`; remember adds --remember.
	approve, remember bool
	// tty runs aos run on a pseudo-terminal, as a human sees it.
	tty bool
	// answer, with tty, is what the owner types at aos run's interactive
	// prompts (--on-ask wait), say "n\n".
	answer string
	// project is the project directory (default the world's repository);
	// @NAME@ placeholders are expanded.
	project string
	// concurrent starts this mission and goes on with the next one at
	// once; it is waited for at the end.
	concurrent bool
	timeout    time.Duration // default 90 s
}

// Classes of issue 10.
const (
	classHostGit  = "1-host-git"
	classSymlink  = "2-symlink"
	classTOCTOU   = "3-toctou"
	classTerminal = "4-terminal"
	classPolicy   = "5-policy"
	classSandbox  = "6-sandbox"
)

// knownEscapes are the attacks that still get out on main, with the
// issue-10 item that fixes them. Unless AOS_HOSTILE_STRICT is set, such an
// attack that still escapes is skipped with its findings; with it set, it
// fails like any other. Remove an entry when its fix lands (an entry that
// no longer escapes says so in the log). docs/HOSTILE.md records which
// attacks escaped on the main the suite was written against.
var knownEscapes = map[string]string{}

func turn(calls ...script.ToolCall) script.Turn { return script.Turn{ToolCalls: calls} }

func sh(command string) script.ToolCall {
	return script.ToolCall{Name: "shell", Input: map[string]any{"command": command, "timeoutSec": 60}}
}

func call(name string, kv ...string) script.ToolCall {
	in := map[string]any{}
	for i := 0; i+1 < len(kv); i += 2 {
		in[kv[i]] = kv[i+1]
	}
	return script.ToolCall{Name: name, Input: in}
}

func readFile(path string) script.ToolCall { return call("read_file", "path", path) }

func writeFile(path, content string) script.ToolCall {
	return call("write_file", "path", path, "content", content)
}

func TestHostile(t *testing.T) {
	start := time.Now()
	t.Cleanup(func() { t.Logf("hostile suite: %s", time.Since(start).Round(time.Millisecond)) })
	names := map[string]bool{}
	for _, a := range attacks() {
		if names[a.name] {
			t.Fatalf("two attacks named %s", a.name)
		}
		names[a.name] = true
		drivers := a.drivers
		if drivers == nil {
			drivers = []string{"sqlite"}
		}
		for _, d := range drivers {
			t.Run(a.class+"/"+a.name+"/"+d, func(t *testing.T) {
				t.Parallel()
				runAttack(t, a, d)
			})
		}
	}
}

// runAttack plays one attack in a fresh world and judges it.
func runAttack(t *testing.T, a attack, driver string) {
	w := newWorld(t, driver)
	w.env = append(w.env, a.env...)
	if a.setup != nil {
		a.setup(w)
	}
	w.commitSetup()
	w.startModelServer(a.missions)
	keep := []string{w.home, w.outside, w.pwned, filepath.Join(w.data, "canary.txt")}
	if fi, err := os.Lstat(filepath.Join(w.repo, ".git")); err == nil && fi.IsDir() {
		// The owner's repository's config and hooks: a worktree's gitdir
		// lies inside it.
		keep = append(keep, filepath.Join(w.repo, ".git", "config"), filepath.Join(w.repo, ".git", "hooks"))
	}
	before := snapshot(keep...)
	f := &findings{}

	ctx, cancel := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	if a.during != nil {
		bg.Add(1)
		go func() { defer bg.Done(); a.during(ctx, w) }()
	}
	var concurrent sync.WaitGroup
	owner := w.ownerState(w.repo)
	for i, m := range a.missions {
		if m.concurrent {
			concurrent.Add(1)
			go func() { defer concurrent.Done(); w.run(ctx, i, m) }()
			continue
		}
		r := w.run(ctx, i, m)
		// A mission works in its own worktree: the owner's checkout is
		// never touched (a concurrent one must not touch it either).
		for _, d := range diffSnapshots(owner, w.ownerState(w.repo)) {
			f.add("the owner's checkout changed during mission %d: %s", i+1, d)
		}
		if i < len(a.missions)-1 {
			// The owner takes the work, so the next mission starts from it.
			w.takeBranch(r)
		}
		owner = w.ownerState(w.repo)
	}
	concurrent.Wait()
	cancel()
	bg.Wait()
	for _, d := range diffSnapshots(owner, w.ownerState(w.repo)) {
		f.add("the owner's checkout changed at the end: %s", d)
	}

	w.checkOutside(a, before, keep, f)
	if a.check != nil {
		a.check(w, f)
	}
	judge(t, a, w, f.all())
}

// judge fails on findings, except for a known escape outside strict mode.
func judge(t *testing.T, a attack, w *world, found []string) {
	if len(found) == 0 {
		if reason, ok := knownEscapes[a.name]; ok {
			t.Logf("%s is listed in knownEscapes (%s) but did not escape: remove it from the list once its fix is merged", a.name, reason)
		}
		return
	}
	msg := "- " + strings.Join(found, "\n- ")
	if reason, ok := knownEscapes[a.name]; ok && !a.control && os.Getenv("AOS_HOSTILE_STRICT") == "" {
		t.Skipf("KNOWN ESCAPE (%s), tolerated until AOS_HOSTILE_STRICT=1:\n%s", reason, msg)
	}
	t.Errorf("%s %s got out:\n%s\naos run output:\n%s", a.class, a.name, msg, w.output())
}
