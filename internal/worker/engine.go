package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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
// getenv reads the environment the CLI passed down (the demo passes a fake
// key for its scripted model and nothing else); nil is an empty one. models adds priced or local models.
// Local models ("local:NAME") go to AOS_LOCAL_BASE_URL.
func AdapterFunc(baseURL string, getenv func(string) string, models ...provider.ModelInfo) func(model string) (provider.Adapter, error) {
	return Adapters(AdapterOptions{BaseURL: baseURL, Getenv: getenv, Models: models})
}

// AdapterOptions configure Adapters.
type AdapterOptions struct {
	// BaseURL overrides the Anthropic and OpenAI base URLs (tests point
	// them at the scripted model server); local models never use it.
	BaseURL string
	// Getenv reads the environment the CLI passed down; nil means an
	// empty one (no keys).
	Getenv func(string) string
	// Models adds priced or local models.
	Models []provider.ModelInfo
	// LocalSetting returns the owner's local endpoint setting ("" when
	// unset); nil means none. It is read each time an adapter is built,
	// so a changed setting applies to the next run execution.
	LocalSetting func() (string, error)
	// Observer, when set, sees every model call (metrics); nil in tests.
	Observer ModelObserver
}

// Adapters builds adapters for models: "local:NAME" to the compat adapter
// at the local endpoint (the setting, else AOS_LOCAL_BASE_URL), others to
// the provider ProviderFor names.
func Adapters(o AdapterOptions) func(model string) (provider.Adapter, error) {
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return func(model string) (provider.Adapter, error) {
		id, ok := registry.ProviderFor(model)
		if !ok {
			return nil, fmt.Errorf("no provider serves model %q", model)
		}
		cfg := provider.Config{BaseURL: o.BaseURL, Getenv: getenv, Models: o.Models}
		if id == provider.Compat {
			setting := ""
			if o.LocalSetting != nil {
				var err error
				if setting, err = o.LocalSetting(); err != nil {
					return nil, fmt.Errorf("read the local endpoint setting: %w", err)
				}
			}
			cfg.BaseURL, cfg.KeyEnv = provider.LocalBaseURL(setting, getenv), provider.EnvLocalKey
			if cfg.BaseURL == "" {
				return nil, provider.ErrNoLocalEndpoint
			}
			if err := provider.CheckLocalBaseURL(cfg.BaseURL); err != nil {
				return nil, fmt.Errorf("local endpoint (%s or the localBaseUrl setting): %w", provider.EnvLocalBase, err)
			}
			priced, err := provider.ParseLocalPrices(getenv(provider.EnvLocalPrices))
			if err != nil {
				return nil, err
			}
			cfg.Models = append(append([]provider.ModelInfo(nil), o.Models...), priced...)
		}
		a, err := registry.New(id, cfg)
		if err != nil || o.Observer == nil {
			return a, err
		}
		return observed{Adapter: a, obs: o.Observer}, nil
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

// LocalSetting returns a reader of the owner's local endpoint setting
// (provider.SettingLocalBaseURL) in st, for AdapterOptions.LocalSetting.
func LocalSetting(st store.Store) func() (string, error) {
	return func() (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		raw, err := st.GetSetting(ctx, provider.SettingLocalBaseURL)
		if errors.Is(err, store.ErrNotFound) {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", fmt.Errorf("setting %s is not a string: %w", provider.SettingLocalBaseURL, err)
		}
		return v, nil
	}
}
