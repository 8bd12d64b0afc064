package cli

import (
	"os"
	"testing"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/sandbox"
)

// TestMain lets the test binary stand in for aos where a test re-executes
// it: the sandbox's probe child and warm init, and an external engine's
// in-sandbox model-proxy forwarder.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "sandbox" && os.Args[2] == "probe-child" {
		os.Exit(sandbox.ProbeChildMain(os.Args[3:]))
	}
	if len(os.Args) > 1 && os.Args[1] == sandbox.InitArg {
		os.Exit(sandbox.InitMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == backend.ForwarderArg {
		os.Exit(backend.ForwarderMain(os.Args[2:]))
	}
	os.Exit(m.Run())
}
