package backend_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/testbin"
)

// The self-test passes an engine that creates the file it is asked for
// while HEAD stays at the base, and fails one that does something else
// (here /bin/true: no result at all); Offered then refuses a changed
// binary.
func TestSelfTest(t *testing.T) {
	t.Parallel()
	sb, err := sandbox.New(sandbox.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng := "command:" + testEngine(t)
	rec, err := backend.SelfTest(ctx, sb, eng, t.TempDir(), time.Minute)
	if err != nil || !rec.Passed {
		t.Fatalf("self-test of the test engine: %+v %v", rec, err)
	}
	if err := backend.Offered(eng, rec, true); err != nil {
		t.Fatal(err)
	}
	bad, err := backend.SelfTest(ctx, sb, "command:/bin/true", t.TempDir(), time.Minute)
	if err != nil || bad.Passed {
		t.Fatalf("self-test of /bin/true: %+v %v", bad, err)
	}
	if err := backend.Offered("command:/bin/true", bad, true); err == nil {
		t.Fatal("a failed engine is offered")
	}
	// A copy that passed, then changed, is not offered.
	cp := filepath.Join(t.TempDir(), "engine")
	b, _ := os.ReadFile(testEngine(t))
	testbin.WriteExecutable(t, cp, b)
	rec2, err := backend.SelfTest(ctx, sb, "command:"+cp, t.TempDir(), time.Minute)
	if err != nil || !rec2.Passed {
		t.Fatalf("self-test of the copy: %+v %v", rec2, err)
	}
	if err := os.WriteFile(cp, append(b, 0), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := backend.Offered("command:"+cp, rec2, true); err == nil {
		t.Fatal("a changed binary is offered")
	}
}
