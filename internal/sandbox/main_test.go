package sandbox_test

import (
	"os"
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
)

// TestMain lets the test binary act as the probe's inside half, the way the
// aos binary does for `aos sandbox probe-child`, and as an unprivileged
// re-exec of the suite (see asUnprivileged).
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "sandbox" && os.Args[2] == "probe-child" {
		os.Exit(sandbox.ProbeChildMain(os.Args[3:]))
	}
	os.Exit(m.Run())
}
