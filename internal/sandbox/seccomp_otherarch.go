//go:build linux && !amd64 && !arm64

package sandbox

import (
	"os"
	"runtime"
)

// filterFile fails closed on architectures whose seccomp filter aos does
// not generate yet.
func filterFile(Network, bool) (*os.File, error) {
	return nil, &UnavailableError{Reason: "no seccomp filter for " + runtime.GOARCH, Fix: "run aos on amd64 or arm64"}
}
