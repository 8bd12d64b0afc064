package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider/script"
	"github.com/aos-run/aos/internal/store/storetest"
)

// BenchmarkAgentLoop measures the agent loop's overhead per turn: a
// 100-turn mission against the scripted model server, which answers at
// once, of one read_file per turn ("read") or one write_file per turn
// ("write"; an idempotent write with a probe: its intent commits, its
// result rides on the next commit). Every tenth turn also updates a
// criterion, so the stall guard sees progress.
//
// Each iteration runs the mission twice, interleaved (the order alternates
// between iterations): with every record committed on its own ("every",
// kernel.Options.CommitEveryStep, the structure before issue 17) and with
// the kernel's deferred records ("deferred", the default). After each run,
// the model's floor is measured in the same process: the very requests the
// run sent (as the scripted server recorded them: the same growing
// conversation, system prompt and tools) are replayed through the official
// Anthropic SDK to the same server, one after another, with no loop, no
// store and no tools. A run's time is its execution (the run's started_at
// to ended_at: setup, the turns and the end, not the mission's creation nor
// its claim). Per turn (101 turns: 100 tools, then finish) it reports
// every-ms/turn and deferred-ms/turn (the run's time); floor-ms/turn (the
// replayed model calls, the mean of both runs'); every-overhead-ms/turn
// and deferred-overhead-ms/turn (the run's time less its own floor: what
// aos spends per turn); overhead-ratio (deferred's overhead over every's;
// issue 17's goal is ≤ 0.40); every-commits/turn and deferred-commits/turn
// (the store's count of committed transactions).
//
//	go test -run '^$' -bench AgentLoop -benchtime 3x -count 3 ./internal/engine
//
// AOS_BENCH_LOOP_MODE=every or =deferred runs one mode only (for a CPU
// profile of it); the other mode's figures are then meaningless.
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
			b.Run(work.name+"/"+driver, func(b *testing.B) {
				var every, deferred loopFigures
				for n := 0; n < b.N; n++ {
					modes := []bool{true, false}
					if n%2 == 1 {
						modes = []bool{false, true}
					}
					for _, m := range modes {
						if only := os.Getenv("AOS_BENCH_LOOP_MODE"); only != "" && only != modeName(m) {
							continue // profiling one mode
						}
						f := benchLoopOnce(b, driver, sb.String(), turns, m)
						if m {
							every.add(f)
						} else {
							deferred.add(f)
						}
					}
				}
				per := float64(b.N * (turns + 1))
				ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / per }
				eo, do := ms(every.run-every.floor), ms(deferred.run-deferred.floor)
				b.ReportMetric(ms(every.run), "every-ms/turn")
				b.ReportMetric(ms(deferred.run), "deferred-ms/turn")
				b.ReportMetric((ms(every.floor)+ms(deferred.floor))/2, "floor-ms/turn")
				b.ReportMetric(eo, "every-overhead-ms/turn")
				b.ReportMetric(do, "deferred-overhead-ms/turn")
				b.ReportMetric(do/eo, "overhead-ratio")
				b.ReportMetric(float64(every.commits)/per, "every-commits/turn")
				b.ReportMetric(float64(deferred.commits)/per, "deferred-commits/turn")
			})
		}
	}
}

func modeName(every bool) string {
	if every {
		return "every"
	}
	return "deferred"
}

// loopFigures sum one mode's runs.
type loopFigures struct {
	run, floor time.Duration
	commits    uint64
}

func (f *loopFigures) add(g loopFigures) {
	f.run += g.run
	f.floor += g.floor
	f.commits += g.commits
}

// benchLoopOnce runs the mission of scriptYAML once on a fresh database
// and workspace, then measures its model floor.
func benchLoopOnce(b *testing.B, driver, scriptYAML string, turns int, every bool) loopFigures {
	b.StopTimer()
	defer b.StartTimer()
	e := newEnv(b, storetest.New(b, driver), scriptYAML)
	opts := e.opts()
	opts.CommitEveryStep = every
	e.k = kernel.New(e.db.Store, opts)
	for i := 0; i < turns; i++ {
		if err := os.WriteFile(filepath.Join(e.ws, fmt.Sprintf("f%d.txt", i)), []byte(strings.Repeat("line\n", 50)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	stop := e.start()
	defer stop()
	cc := e.db.Store.(commitCounter)
	b.StartTimer()
	before := cc.Commits()
	rid := e.mission(engine.Input{Objective: "bench", Criteria: []string{"c"}, Model: "script:bench", Workspace: e.ws})
	r := e.wait(rid, kernel.StatusPartial, kernel.StatusFailed, kernel.StatusBlocked, kernel.StatusWaiting, kernel.StatusBudgetExhausted)
	b.StopTimer()
	f := loopFigures{commits: cc.Commits() - before, run: time.Duration(r.EndedAt-r.StartedAt) * time.Millisecond}
	if r.Status != kernel.StatusPartial || r.Turns != turns+1 {
		b.Fatalf("run %s after %d turns: %s", r.Status, r.Turns, r.Result)
	}
	if r.StartedAt == 0 || r.EndedAt < r.StartedAt {
		b.Fatalf("run times: started %d, ended %d", r.StartedAt, r.EndedAt)
	}
	stop()
	f.floor = modelFloor(b, e.srv, turns+1)
	return f
}

// modelFloor replays the model requests srv recorded, in order, through
// the official Anthropic SDK (configured as the adapter configures it) to
// srv, reading each answer's stream to its end, and returns the time they
// took. want is the number of model requests the run must have sent.
func modelFloor(b *testing.B, srv *script.Server, want int) time.Duration {
	b.Helper()
	var bodies [][]byte
	for _, r := range srv.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/messages" {
			if r.Status != http.StatusOK {
				b.Fatalf("model request %d answered %d: %s", r.Seq, r.Status, r.Error)
			}
			bodies = append(bodies, r.Body)
		}
	}
	if len(bodies) != want {
		b.Fatalf("the run sent %d model requests, want %d", len(bodies), want)
	}
	client := sdk.NewClient(option.WithoutEnvironmentDefaults(), option.WithBaseURL(srv.URL()), option.WithAPIKey("test-key-not-secret"),
		option.WithHTTPClient(&http.Client{}), option.WithMaxRetries(0))
	ctx := context.Background()
	start := time.Now()
	for i, body := range bodies {
		stream := client.Beta.Messages.NewStreaming(ctx, sdk.BetaMessageNewParams{}, option.WithRequestBody("application/json", body))
		stopped := false
		for stream.Next() {
			if ev := stream.Current(); ev.Type == "message_stop" {
				stopped = true
			}
		}
		err := stream.Err()
		_ = stream.Close()
		if err != nil || !stopped {
			b.Fatalf("replay model request %d: stopped %v, %v", i, stopped, err)
		}
	}
	return time.Since(start)
}
