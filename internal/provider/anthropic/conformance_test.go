package anthropic_test

import (
	"testing"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/anthropic"
	"github.com/aos-run/aos/internal/provider/providertest"
	"github.com/aos-run/aos/internal/provider/script"
)

// TestConformance runs the adapters' conformance suite against the
// Anthropic adapter, pointed at the scripted server by ANTHROPIC_BASE_URL.
func TestConformance(t *testing.T) {
	t.Parallel()
	providertest.Exercise(t, providertest.Target{
		ID: provider.Anthropic, KeyEnv: provider.EnvAnthropicKey, Overloaded: 529,
		New: func(_ *testing.T, srv *script.Server, cfg provider.Config) provider.Adapter {
			env := cfg.Getenv
			cfg.Getenv = func(k string) string {
				if k == provider.EnvAnthropicBase {
					return srv.URL()
				}
				return env(k)
			}
			return anthropic.New(cfg)
		},
	})
}
