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
// store and no tools.
//
// A turn's time is measured in steady state: from the run's first model
// request to its last, over the 100 turns between them (each a model call
// and what the loop does with its answer), so the mission's setup and end
// (its git worktree, a few dozen git processes) are left out. It reports,
// per turn: every-ms/turn and deferred-ms/turn (that time); floor-ms/turn
// (a replayed model call, the mean of both runs'); every-overhead-ms/turn
// and deferred-overhead-ms/turn (a turn less its run's own floor: what aos
// spends per turn); overhead-ratio (deferred's overhead over every's;
// issue 17's goal is ≤ 0.40); every-commits/turn and deferred-commits/turn
// (the store's count of committed transactions, setup and end included);
// and the same over the whole run (started_at to ended_at, over 101 turns,
// setup and end included): every-run-ms/turn, deferred-run-ms/turn and
// run-overhead-ratio.
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
				ms := func(d time.Duration, n float64) float64 { return float64(d.Microseconds()) / 1000 / n }
				steady := float64(b.N * turns)
				floorE, floorD := ms(every.floor, per), ms(deferred.floor, per)
				eo, do := ms(every.steady, steady)-floorE, ms(deferred.steady, steady)-floorD
				b.ReportMetric(ms(every.steady, steady), "every-ms/turn")
				b.ReportMetric(ms(deferred.steady, steady), "deferred-ms/turn")
				b.ReportMetric((floorE+floorD)/2, "floor-ms/turn")
				b.ReportMetric(eo, "every-overhead-ms/turn")
				b.ReportMetric(do, "deferred-overhead-ms/turn")
				b.ReportMetric(do/eo, "overhead-ratio")
				b.ReportMetric(float64(every.commits)/per, "every-commits/turn")
				b.ReportMetric(float64(deferred.commits)/per, "deferred-commits/turn")
				b.ReportMetric(ms(every.run, per), "every-run-ms/turn")
				b.ReportMetric(ms(deferred.run, per), "deferred-run-ms/turn")
				b.ReportMetric((ms(deferred.run, per)-floorD)/(ms(every.run, per)-floorE), "run-overhead-ratio")
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
	run, steady, floor time.Duration
	commits            uint64
}

func (f *loopFigures) add(g loopFigures) {
	f.run += g.run
	f.steady += g.steady
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
	f.steady, f.floor = modelFloor(b, e.srv, turns+1)
	return f
}

// modelFloor returns the time from the first to the last of the model
// requests srv recorded (the run's steady state), then replays them, in
// order, through the official Anthropic SDK (configured as the adapter
// configures it) to srv, reading each answer's stream to its end, and
// returns the time the replay took. want is the number of model requests
// the run must have sent.
func modelFloor(b *testing.B, srv *script.Server, want int) (steady, floor time.Duration) {
	b.Helper()
	var bodies [][]byte
	var first, last time.Time
	for _, r := range srv.Requests() {
		if r.Method == http.MethodPost && r.Path == "/v1/messages" {
			if r.Status != http.StatusOK {
				b.Fatalf("model request %d answered %d: %s", r.Seq, r.Status, r.Error)
			}
			if len(bodies) == 0 {
				first = r.Time
			}
			last = r.Time
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
	return last.Sub(first), time.Since(start)
}
