package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/aos-run/aos/internal/engine"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/policy"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/registry"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/tool"
)

// AdapterFunc builds adapters for models from the environment: keys and
// base URLs are read by the adapters themselves (ANTHROPIC_API_KEY, …).
// getenv, when non-nil, replaces os.Getenv (the demo passes a fake key for
// its scripted model and nothing else). models adds priced or local models.
func AdapterFunc(baseURL string, getenv func(string) string, models ...provider.ModelInfo) func(model string) (provider.Adapter, error) {
	return func(model string) (provider.Adapter, error) {
		id, ok := registry.ProviderFor(model)
		if !ok {
			return nil, fmt.Errorf("no provider serves model %q", model)
		}
		return registry.New(id, provider.Config{BaseURL: baseURL, Getenv: getenv, Models: models})
	}
}

// EngineDeps assembles the agent loop's dependencies over a kernel.
func EngineDeps(k *kernel.Kernel, dataDir string, sb tool.Runner, adapter func(string) (provider.Adapter, error)) engine.Deps {
	st := k.Store()
	return engine.Deps{
		Adapter: adapter,
		Tools:   tool.Default(),
		Sandbox: sb,
		Kernel:  k,
		DataDir: dataDir,
		Rules: func(ctx context.Context, projectID string) ([]policy.Rule, error) {
			rs, err := st.ListPolicyRules(ctx, projectID)
			if err != nil {
				return nil, err
			}
			out := make([]policy.Rule, 0, len(rs))
			for _, r := range rs {
				out = append(out, policy.Rule{ID: r.ID, ProjectID: r.ProjectID, Tool: r.Tool, CommandPrefix: r.CommandPrefix, Decision: policy.Decision(r.Decision)})
			}
			return out, nil
		},
		AddRule: func(ctx context.Context, r policy.Rule) error {
			err := st.InsertPolicyRule(ctx, store.PolicyRule{ID: r.ID, ProjectID: r.ProjectID, Tool: r.Tool, CommandPrefix: r.CommandPrefix,
				Decision: string(r.Decision), Note: "remembered approval", CreatedAt: 0})
			if errors.Is(err, store.ErrConflict) {
				return nil // already stored by an earlier execution of this step
			}
			return err
		},
	}
}
