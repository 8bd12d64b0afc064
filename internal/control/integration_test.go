package control_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/control"
	"github.com/aos-run/aos/internal/gitx"
	"github.com/aos-run/aos/internal/integrate"
)

// TestIntegrationStatus: integration.status reads the queues aos integrate
// recorded (filtered by repository and target) and changes nothing.
func TestIntegrationStatus(t *testing.T) {
	t.Parallel()
	f := setup(t, 0)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "app")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"commit", "-q", "--allow-empty", "-m", "base"}, {"branch", "aos/integration"}} {
		if out, err := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	repo, err := gitx.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	in, err := integrate.New(integrate.Options{Repo: repo, Target: "aos/integration", State: f.ints,
		Load: func(context.Context, string) ([]byte, error) { return nil, os.ErrNotExist }})
	if err != nil {
		t.Fatal(err)
	}
	sha := strings.Repeat("ab", 32)
	if _, err := in.Enqueue(ctx, sha); err != nil {
		t.Fatal(err)
	}
	rev := func() uint64 {
		s, err := f.ints.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.Revision
	}
	before := rev()
	var qs []integrate.Queue
	if err := f.client.Call(ctx, control.OpIntegrationStatus, "", control.IntegrationArgs{}, &qs); err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 || qs[0].Target != "aos/integration" || len(qs[0].Items) != 1 || qs[0].Items[0].ChangeSet != sha || qs[0].Items[0].State != integrate.StateQueued {
		t.Fatalf("integration.status: %+v", qs)
	}
	if err := f.client.Call(ctx, control.OpIntegrationStatus, "", control.IntegrationArgs{Target: "other"}, &qs); err != nil || len(qs) != 0 {
		t.Fatalf("filtered by another target: %+v %v", qs, err)
	}
	if rev() != before {
		t.Error("integration.status wrote the records")
	}
}
