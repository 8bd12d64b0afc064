//go:build !linux

package sandbox

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"runtime"
)

// The bubblewrap sandbox is Linux-only; elsewhere everything fails closed.
// A macOS sandbox-exec tier can come later behind the same API.

func unsupported() error {
	return &UnavailableError{Reason: "the sandbox is not supported on " + runtime.GOOS, Fix: "run aos on Linux with bubblewrap installed"}
}

func (s *Sandbox) exec(context.Context, plan) (Outcome, error) { return Outcome{}, unsupported() }

func ensureDevNodes(string) (string, error) { return "", unsupported() }

var devNodes []struct {
	name         string
	major, minor uint32
}

// ProbeChildMain is the inside half of the canary probe; it does nothing
// on this platform.
func ProbeChildMain([]string) int {
	fmt.Fprintln(os.Stderr, unsupported())
	return 2
}

func ownerAndCtime(fs.FileInfo) string { return "?" }

func limitsMechanism(string, Limits) string { return "none" }
func tunUsable() error                      { return unsupported() }

// DiskUsage measures disk use; it is not supported on this platform.
func DiskUsage(context.Context, []string, []string, int64) (int64, error) { return 0, unsupported() }

func (s *Sandbox) checkDisk(context.Context, plan) *QuotaError { return nil }

func sweepCgroups(string) {}
