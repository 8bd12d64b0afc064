package engine_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store/storetest"
	"github.com/aos-run/aos/internal/worker"
)

// TestLiveFixesTheBug is the demo mission against the real provider on the
// volume models (AOS_LIVE_TESTS=1; it costs a few cents). It is skipped,
// not failed, without the opt-in or a key.
func TestLiveFixesTheBug(t *testing.T) {
	if os.Getenv("AOS_LIVE_TESTS") != "1" {
		t.Skip("live tests are opt-in: AOS_LIVE_TESTS=1")
	}
	for _, tc := range []struct{ model, key string }{{"claude-haiku-5-5", provider.EnvAnthropicKey}, {"gpt-6-luna", provider.EnvOpenAIKey}} {
		t.Run(tc.model, func(t *testing.T) {
			if os.Getenv(tc.key) == "" {
				t.Skip(tc.key + " not set")
			}
			e := newEnv(t, storetest.New(t, "sqlite"), "")
			sb, err := sandbox.New(sandbox.Config{DataDir: e.dir})
			if err != nil {
				t.Fatal(err)
			}
			deps := worker.EngineDeps(e.k, e.dir, sb, worker.AdapterFunc("", nil))
			stop := startWith(t, e, deps)
			defer stop()
			rid := e.missionBudget(engine.Input{Objective: demo.Objective, Criteria: []string{demo.Criterion}, Model: tc.model}, kernel.Budget{USD: 0.25, Turns: 30})
			r := e.wait(rid, kernel.StatusDone, kernel.StatusPartial, kernel.StatusBlocked, kernel.StatusFailed, kernel.StatusBudgetExhausted)
			if r.Status != kernel.StatusDone {
				t.Fatalf("status %s: %s", r.Status, r.Result)
			}
			if out, err := exec.Command("sh", "-c", "cd "+e.branchTree(rid)+" && sh test.sh").CombinedOutput(); err != nil {
				t.Fatalf("the test still fails: %s", out)
			}
			if e.git("rev-list", "--count", "main.."+e.branchOf(rid)) == "0" {
				t.Error("no commit on the mission branch")
			}
			t.Logf("spent $%.4f in %d turns", r.SpentUSD, r.Turns)
		})
	}
}
