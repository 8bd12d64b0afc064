//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"io/fs"
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

func openNoFollow(string) (*os.File, error) { return nil, unsupported() }
func ownedByMe(fs.FileInfo) bool            { return false }
func fileIdentity(fs.FileInfo) string       { return "" }
func kernelRelease() string                 { return "" }
