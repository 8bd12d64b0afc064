package kernel_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storeopen"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestPostgresRestartLosesAndDuplicatesNothing restarts a PostgreSQL
// cluster in the middle of a run: every step must end recorded exactly once,
// and executed exactly once (commits are retried, not re-executed). The
// cluster is the test's own, so the restart disturbs no other test.
func TestPostgresRestartLosesAndDuplicatesNothing(t *testing.T) {
	t.Parallel()
	storetest.PostgresURL(t) // skips, or fails under AOS_TEST_REQUIRE_POSTGRES, like every PostgreSQL test
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "scripts", "pgcluster.sh")
	dir, err := os.MkdirTemp("", "aos-pgrestart-")
	if err != nil {
		t.Fatal(err)
	}
	_ = os.Chmod(dir, 0o755) // the cluster runs as the postgres user
	out, err := exec.Command("bash", script, "start", dir).Output()
	if err != nil {
		t.Fatalf("start a private cluster: %v", err)
	}
	t.Cleanup(func() {
		_ = exec.Command("bash", script, "stop", dir).Run()
		_ = os.RemoveAll(dir)
	})
	st, err := storeopen.Open(context.Background(), strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	db := storetest.DB{Store: st, Driver: "postgres"}
	b := setup(t, db)
	c := newCounter()
	const n = 30
	logic := func(rc kernel.RunContext) (kernel.Result, error) {
		for i := 0; i < n; i++ {
			// Announced, so each step commits its intent (and the result
			// before it) as it starts: the restart lands among commits.
			_, err := rc.Step(kernel.StepSpec{Kind: "test", Name: "s", Effect: kernel.EffectIdempotentWrite, Request: i, Announce: true},
				func(ctx context.Context, key string) (kernel.Outcome, error) {
					c.inc(key)
					time.Sleep(30 * time.Millisecond) // the work a step does; the restart lands among steps
					return kernel.Outcome{Result: i}, nil
				})
			if err != nil {
				return kernel.Result{}, err
			}
		}
		return kernel.Result{Status: kernel.StatusDone}, nil
	}
	opts := fastOpts(t.TempDir())
	opts.Lease = time.Minute // the restart must not cost the lease
	b.worker(kernel.New(db.Store, opts), map[string]kernel.Logic{"pg": logic})
	_, rid := b.mission("pg", nil, kernel.Budget{})
	waitFor(t, 20*time.Second, "a few steps", func() (bool, string) { return len(b.steps(rid)) >= 5, "" })
	if n := len(b.steps(rid)); n >= 30 {
		t.Fatalf("the run finished (%d steps) before the restart; the test needs slower steps", n)
	}
	if out, err := exec.Command("bash", script, "restart", dir).CombinedOutput(); err != nil {
		t.Fatalf("restart cluster: %v\n%s", err, out)
	}
	r := b.waitStatus(rid, kernel.StatusDone, kernel.StatusFailed)
	if r.Status != kernel.StatusDone {
		t.Fatalf("status = %s %s", r.Status, r.Error)
	}
	steps := b.steps(rid)
	if len(steps) != n {
		t.Fatalf("journal has %d steps, want %d", len(steps), n)
	}
	for i, s := range steps {
		if s.Seq != i || s.Status != "completed" || string(s.Result) != fmt.Sprint(i) {
			t.Errorf("step %d = %d %s %s", i, s.Seq, s.Status, s.Result)
		}
		if got := c.get(s.IdemKey); got != 1 {
			t.Errorf("step %d executed %d times, want 1", i, got)
		}
	}
}
