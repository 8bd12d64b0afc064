//go:build linux

package sandbox_test

import (
	"context"
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
)

func TestProbePasses(t *testing.T) {
	s := newSandbox(t, sandbox.Config{})
	r, err := s.Probe(context.Background())
	for _, c := range r.Checks {
		t.Logf("%-32s %v %s", c.Name, c.OK, c.Detail)
	}
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	t.Logf("probe took %v", r.Duration)
}
