package worker

import (
	"context"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/policy"
)

// BackendDeps assembles external-engine missions' dependencies over a
// kernel. getenv is the worker's environment, passed down from the CLI: the
// model proxy's real keys and upstream URLs (which engines never see) and
// the engines' tool paths. The workspace root (other projects) is hidden
// from the engines.
func BackendDeps(k *kernel.Kernel, dataDir, workspaceRoot string, sb backend.Runner, getenv func(string) string) backend.Deps {
	rules := EngineDeps(k, dataDir, nil, nil).Rules
	return backend.Deps{
		Kernel:  k,
		Sandbox: sb,
		DataDir: dataDir,
		Rules:   func(ctx context.Context, projectID string) ([]policy.Rule, error) { return rules(ctx, projectID) },
		Proxy:   &backend.ProxyConfig{Kernel: k, Getenv: getenv},
		Hide:    []string{workspaceRoot},
		Getenv:  getenv,
	}
}
