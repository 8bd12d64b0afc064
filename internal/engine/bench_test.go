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
// the model: a 100-turn mission of one read_file per turn against the
// scripted model server, which answers at once. Every tenth turn also
// updates a criterion, so the stall guard sees progress. It reports
// ms/turn and that time's share of a typical 1.5 s model call.
func BenchmarkAgentLoop(b *testing.B) {
	const turns = 100
	var sb strings.Builder
	sb.WriteString("name: bench\nturns:\n")
	for i := 0; i < turns; i++ {
		fmt.Fprintf(&sb, "  - tool_calls:\n      - {name: read_file, input: {path: f%d.txt}}\n", i)
		if i%10 == 9 {
			sb.WriteString("      - {name: update_criteria, input: {updates: [{id: c1, passes: false, evidence: \"still reading\"}]}}\n")
		}
	}
	sb.WriteString("  - tool_calls:\n      - {name: finish, input: {status: partial, summary: done, evidence: [], openQuestions: []}}\n")
	for _, driver := range storetest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			var total time.Duration
			for n := 0; n < b.N; n++ {
				b.StopTimer()
				e := newEnv(b, storetest.New(b, driver), sb.String())
				for i := 0; i < turns; i++ {
					if err := os.WriteFile(filepath.Join(e.ws, fmt.Sprintf("f%d.txt", i)), []byte(strings.Repeat("line\n", 50)), 0o644); err != nil {
						b.Fatal(err)
					}
				}
				stop := e.start()
				b.StartTimer()
				start := time.Now()
				rid := e.mission(engine.Input{Objective: "bench", Criteria: []string{"c"}, Model: "script:bench", Workspace: e.ws})
				r := e.wait(rid, kernel.StatusPartial, kernel.StatusFailed, kernel.StatusBlocked, kernel.StatusWaiting, kernel.StatusBudgetExhausted)
				total += time.Since(start)
				b.StopTimer()
				stop()
				if r.Status != kernel.StatusPartial || r.Turns != turns+1 {
					b.Fatalf("run %s after %d turns: %s", r.Status, r.Turns, r.Result)
				}
			}
			msPerTurn := float64(total.Milliseconds()) / float64(b.N*(turns+1))
			b.ReportMetric(msPerTurn, "ms/turn")
			b.ReportMetric(100*msPerTurn/1500, "%of1.5s")
		})
	}
}
