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
	if len(os.Args) > 1 && os.Args[1] == sandbox.InitArg { // the warm sandbox's init
		os.Exit(sandbox.InitMain(os.Args[2:]))
	}
	if os.Getenv("AOS_TOOL_TEST_CHILD") == "write-loop" {
		os.Exit(childWriteLoop(os.Getenv("AOS_TOOL_TEST_WS")))
	}
	os.Exit(m.Run())
}
