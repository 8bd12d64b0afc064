package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/worker"
)

const watchScript = `name: test
turns:
  - text: "I will say hello."
    tool_calls: [{name: shell, input: {command: "echo hello from the sandbox", timeoutSec: 10}}]
  - expect: [{last_tool_result_contains: "hello from the sandbox"}]
    tool_calls: [{name: update_criteria, input: {updates: [{id: c1, passes: true, evidence: "the shell printed hello"}]}}]
  - expect: [{last_tool_result_error: false}]
    tool_calls:
      - {name: finish, input: {status: done, summary: "said hello", evidence: ["the shell printed it"], openQuestions: []}}
`

// startWorker runs a kernel worker with the scripted model on r's kernel.
func startWorker(t *testing.T, r *remote, scriptYAML string) {
	t.Helper()
	srv := scripttest.Start(t, scriptYAML)
	r.svcEnv["ANTHROPIC_BASE_URL"] = srv.URL() // before any request reads it
	dataDir := t.TempDir()
	sb, err := sandbox.New(sandbox.Config{DataDir: dataDir})
	if err != nil {
		t.Fatal(err)
	}
	deps := worker.EngineDeps(r.k, dataDir, sb, worker.AdapterFunc(srv.URL(), func(k string) string {
		if strings.HasSuffix(k, "_API_KEY") {
			return "sk-FAKE-script"
		}
		return ""
	}))
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = r.k.RunWorker(ctx, kernel.WorkerConfig{Concurrency: 1, Logics: map[string]kernel.Logic{engine.LogicName: engine.AgentLogic(deps)},
			JanitorEvery: 50 * time.Millisecond})
	}()
	t.Cleanup(func() { stop(); wg.Wait() })
}

// TestWatchApproveOverAPI: aos mission create --watch follows a real
// mission (kernel worker, scripted model, sandbox, git) over the
// WebSocket, prints its approval with the command that resolves it, aos
// approve resolves it over the API, and watch exits 0 when the mission is
// done. Watching the ended mission again replays the same timeline.
func TestWatchApproveOverAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		r := setupRemote(t, db)
		if err := demo.WriteRepo(filepath.Join(r.root, "repo")); err != nil {
			t.Fatal(err)
		}
		startWorker(t, r, watchScript)

		live := &syncBuffer{}
		type result struct {
			out, errOut string
			code        exitCode
		}
		done := make(chan result, 1)
		go func() {
			out, errOut, code := runAOS(context.Background(), r.clientEnv(""), live, "mission", "create", "say hello", "--workspace", "repo",
				"--criteria", "it says hello", "--model", "script:test", "--network", "open", "--budget-usd", "0.1", "--max-turns", "10", "--watch")
			done <- result{out, errOut, code}
		}()
		approve := regexp.MustCompile(`aos approve ([0-9a-f-]{36}) \[--remember\]`)
		waitFor(t, 60*time.Second, "the approval command", func() bool { return approve.MatchString(live.String()) }, live.String)
		waitID := approve.FindStringSubmatch(live.String())[1]

		if out := r.ok("waits"); !strings.Contains(out, waitID) || !strings.Contains(out, "approval") {
			t.Fatalf("waits:\n%s", out)
		}
		out := r.ok("approve", waitID)
		if !strings.Contains(out, "wait "+waitID+" resolved") {
			t.Fatalf("approve:\n%s", out)
		}
		if _, errOut, code := r.aos("approve", waitID); code != exitFailure || !strings.Contains(errOut, "wait_not_pending") {
			t.Fatalf("second approve: exit %d %s", code, errOut)
		}

		var res result
		select {
		case res = <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("watch did not end:\n%s", live.String())
		}
		if res.code != 0 {
			t.Fatalf("watch: exit %d\n%s\n%s", res.code, res.out, res.errOut)
		}
		want := []string{"mission ", "created", "● mission", "I will say hello.", "? approval needed", "aos approve " + waitID,
			"✓ wait " + short(waitID) + " resolved", "→ shell", "hello from the sandbox", "■ done — said hello"}
		assertInOrder(t, res.out, want)
		if n := strings.Count(res.out, "I will say hello."); n != 1 {
			t.Fatalf("the model's text printed %d times:\n%s", n, res.out)
		}
		var m missionDetail
		r.okJSON(&m, "mission", "show", short(regexp.MustCompile(`mission ([0-9a-f-]{36}) created`).FindStringSubmatch(res.out)[1]))

		// Watching the ended mission replays its timeline to the end; the
		// resolved wait prints no command any more.
		if m.Mission.Status != kernel.StatusDone || len(m.Waits) != 0 {
			t.Fatalf("show after the end: %+v", m)
		}
		again, errOut, code := r.aos("mission", "watch", short(m.Mission.ID))
		if code != 0 || strings.Contains(again, "aos approve") {
			t.Fatalf("watch again: exit %d\n%s%s", code, again, errOut)
		}
		assertInOrder(t, again, append(want[2:4:4], want[6:]...))
	})
}

func assertInOrder(t *testing.T, out string, want []string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("output lacks %q (in order):\n%s", w, out)
		}
		rest = rest[i+len(w):]
	}
}

// largeReadScript writes a small file, then reads a large one in the same
// turn: the write's intent commits the model's result, so the read's
// result (too large for its live copy) is the only record pending when the
// next model call is announced.
const largeReadScript = `name: large
turns:
  - text: "Reading the big file."
    tool_calls:
      - {name: write_file, input: {path: small.txt, content: "small\n"}}
      - {name: read_file, input: {path: big.txt}}
  - expect: [{last_tool_result_contains: "BIG-FILE-FIRST-LINE"}]
    text: "The big file is read."
    tool_calls:
      - {name: finish, input: {status: partial, summary: "read it", evidence: [], openQuestions: []}}
`

// TestWatchShowsALargeResultBeforeTheNextTurn: a tool result too large to
// travel live (over 4 KiB) is shown by its persisted event, before the next
// turn's text, which is printed once (kernel: such a record commits before
// the next model call starts; watch: that call opens after it).
func TestWatchShowsALargeResultBeforeTheNextTurn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		r := setupRemote(t, db)
		repo := filepath.Join(r.root, "repo")
		big := "BIG-FILE-FIRST-LINE\n" + strings.Repeat("filler line of the big file\n", 400)
		if err := os.MkdirAll(repo, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(repo, "big.txt"), []byte(big), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := demo.WriteRepo(repo); err != nil { // commits big.txt too
			t.Fatal(err)
		}
		startWorker(t, r, largeReadScript)
		out, errOut, code := runAOS(context.Background(), r.clientEnv(""), &syncBuffer{}, "mission", "create", "read the big file", "--workspace", "repo",
			"--criteria", "it is read", "--model", "script:large", "--budget-usd", "0.1", "--max-turns", "10", "--watch")
		if code != exitPartial {
			t.Fatalf("watch: exit %d\n%s\n%s", code, out, errOut)
		}
		assertInOrder(t, out, []string{"Reading the big file.", "→ write_file", "→ read_file", "BIG-FILE-FIRST-LINE", "The big file is read.", "read it"})
		for _, text := range []string{"Reading the big file.", "The big file is read.", "BIG-FILE-FIRST-LINE"} {
			if n := strings.Count(out, text); n != 1 {
				t.Fatalf("%q printed %d times:\n%s", text, n, out)
			}
		}
	})
}
