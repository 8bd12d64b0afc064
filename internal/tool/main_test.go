package tool_test

import (
	"os"
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
)

// TestMain lets the test binary act as the sandbox probe's inside half.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "sandbox" && os.Args[2] == "probe-child" {
		os.Exit(sandbox.ProbeChildMain(os.Args[3:]))
	}
	os.Exit(m.Run())
}
