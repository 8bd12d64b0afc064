//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"os"
)

func (w *Warm) runLocked(ctx context.Context, spec Spec) (Outcome, error) { return w.s.run(ctx, spec) }

// InitMain is the warm sandbox's init; it does nothing on this platform.
func InitMain([]string) int {
	fmt.Fprintln(os.Stderr, unsupported())
	return 2
}

type warmBox struct{}

func (*warmBox) stop() {}
