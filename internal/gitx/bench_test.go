package gitx_test

import (
	"context"
	"testing"

	"github.com/aos-run/aos/internal/gitx"
)

// BenchmarkOpenAndStatus is what git_status costs: the project check and
// config audit (two git processes), then status.
func BenchmarkOpenAndStatus(b *testing.B) {
	repo := newRepoB(b)
	ctx := context.Background()
	for b.Loop() {
		r, err := gitx.Open(ctx, repo)
		if err != nil {
			b.Fatal(err)
		}
		if res, err := r.Run(ctx, gitx.Cmd{Args: []string{"status", "--porcelain"}}); err != nil || res.Code != 0 {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkRawStatus is the same status without gitx, for comparison.
func BenchmarkRawStatus(b *testing.B) {
	repo := newRepoB(b)
	ctx := context.Background()
	for b.Loop() {
		if res, err := gitx.Run(ctx, gitx.Cmd{Dir: repo, Args: []string{"status", "--porcelain"}}); err != nil || res.Code != 0 {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkWorktreeAddRemove is what a mission's worktree costs on a small
// project: git worktree add, then remove and prune.
func BenchmarkWorktreeAddRemove(b *testing.B) {
	repo := newRepoB(b)
	ctx := context.Background()
	r, err := gitx.Open(ctx, repo)
	if err != nil {
		b.Fatal(err)
	}
	head, err := r.Head(ctx)
	if err != nil {
		b.Fatal(err)
	}
	wt := b.TempDir() + "/wt"
	for b.Loop() {
		if err := r.AddWorktree(ctx, wt, "aos/bench", head); err != nil {
			b.Fatal(err)
		}
		if err := r.RemoveWorktree(ctx, wt); err != nil {
			b.Fatal(err)
		}
	}
}
