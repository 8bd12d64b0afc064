package client_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestClientDeps: the API client links only the wire types of aos, not the
// kernel, the store, the engine, the mission service or a model SDK (a CLI
// built on it stays small, and a client change cannot pull them in).
func TestClientDeps(t *testing.T) {
	gobin, err := exec.LookPath("go") // go test puts its own GOROOT/bin first on PATH
	if err != nil {
		t.Fatalf("the go command: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", "github.com/aos-run/aos/internal/client").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps listed only %d packages: %s", len(deps), out)
	}
	const aos = "github.com/aos-run/aos/internal/"
	for _, d := range deps {
		switch {
		case strings.HasPrefix(d, aos) && d != aos+"client" && d != aos+"wire":
			t.Errorf("internal/client depends on %s; it may use only internal/wire of aos", d)
		case strings.Contains(d, "anthropic-sdk-go"), strings.Contains(d, "openai-go"):
			t.Errorf("internal/client links the model SDK package %s", d)
		}
	}
}
