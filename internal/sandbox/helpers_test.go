package sandbox_test

import (
	"testing"

	"github.com/aos-run/aos/internal/sandbox"
)

func newSandbox(t *testing.T, cfg sandbox.Config) *sandbox.Sandbox {
	t.Helper()
	if cfg.StateDir == "" {
		cfg.StateDir = t.TempDir()
	}
	s, err := sandbox.New(cfg)
	if err != nil {
		t.Fatalf("new sandbox: %v", err)
	}
	return s
}
