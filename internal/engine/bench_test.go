package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
)

// BenchmarkAgentLoop measures the agent loop's overhead per turn without
// the model: a 100-turn mission against the scripted model server, which
// answers at once, of one read_file per turn ("read") or one write_file per
// turn ("write"; an idempotent write with a probe, whose intent and result
// both commit). Every tenth turn also updates a criterion, so the stall
// guard sees progress. Each runs with the kernel's deferred records
// ("deferred", the default) and side by side with every record committed
// on its own ("commit-every-step", kernel.Options.CommitEveryStep, the
// structure before issue 17). It reports ms/turn, commits/turn (the store's
// count of committed transactions) and ms/turn's share of a typical 1.5 s
// model call.
//
//	go test -run '^$' -bench AgentLoop -benchtime 3x ./internal/engine
func BenchmarkAgentLoop(b *testing.B) {
	const turns = 100
	for _, work := range []struct{ name, call string }{
		{"read", "{name: read_file, input: {path: f%d.txt}}"},
		{"write", "{name: write_file, input: {path: w%d.txt, content: \"x\\n\"}}"},
	} {
		var sb strings.Builder
		sb.WriteString("name: bench\nturns:\n")
		for i := 0; i < turns; i++ {
			fmt.Fprintf(&sb, "  - tool_calls:\n      - "+work.call+"\n", i)
			if i%10 == 9 {
				sb.WriteString("      - {name: update_criteria, input: {updates: [{id: c1, passes: false, evidence: \"still working\"}]}}\n")
			}
		}
		sb.WriteString("  - tool_calls:\n      - {name: finish, input: {status: partial, summary: done, evidence: [], openQuestions: []}}\n")
		for _, driver := range storetest.Drivers() {
			for _, every := range []bool{true, false} {
				mode := "deferred"
				if every {
					mode = "commit-every-step"
				}
				b.Run(work.name+"/"+driver+"/"+mode, func(b *testing.B) {
					var total time.Duration
					var commits uint64
					for n := 0; n < b.N; n++ {
						b.StopTimer()
						e := newEnv(b, storetest.New(b, driver), sb.String())
						opts := e.opts()
						opts.CommitEveryStep = every
						e.k = kernel.New(e.db.Store, opts)
						for i := 0; i < turns; i++ {
							if err := os.WriteFile(filepath.Join(e.ws, fmt.Sprintf("f%d.txt", i)), []byte(strings.Repeat("line\n", 50)), 0o644); err != nil {
								b.Fatal(err)
							}
						}
						stop := e.start()
						cc := e.db.Store.(commitCounter)
						b.StartTimer()
						start, before := time.Now(), cc.Commits()
						rid := e.mission(engine.Input{Objective: "bench", Criteria: []string{"c"}, Model: "script:bench", Workspace: e.ws})
						r := e.wait(rid, kernel.StatusPartial, kernel.StatusFailed, kernel.StatusBlocked, kernel.StatusWaiting, kernel.StatusBudgetExhausted)
						total += time.Since(start)
						commits += cc.Commits() - before
						b.StopTimer()
						stop()
						if r.Status != kernel.StatusPartial || r.Turns != turns+1 {
							b.Fatalf("run %s after %d turns: %s", r.Status, r.Turns, r.Result)
						}
					}
					msPerTurn := float64(total.Microseconds()) / 1000 / float64(b.N*(turns+1))
					b.ReportMetric(msPerTurn, "ms/turn")
					b.ReportMetric(float64(commits)/float64(b.N*(turns+1)), "commits/turn")
					b.ReportMetric(100*msPerTurn/1500, "%of1.5s")
				})
			}
		}
	}
}
