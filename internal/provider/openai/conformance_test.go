package openai_test

import (
	"testing"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/openai"
	"github.com/aos-run/aos/internal/provider/providertest"
	"github.com/aos-run/aos/internal/provider/script"
)

// TestConformance runs the adapters' conformance suite against the OpenAI
// (Responses API) adapter, pointed at the scripted server by
// OPENAI_BASE_URL.
func TestConformance(t *testing.T) {
	t.Parallel()
	providertest.Exercise(t, providertest.Target{
		ID: provider.OpenAI, KeyEnv: provider.EnvOpenAIKey, Overloaded: 503,
		New: func(_ *testing.T, srv *script.Server, cfg provider.Config) provider.Adapter {
			env := cfg.Getenv
			cfg.Getenv = func(k string) string {
				if k == provider.EnvOpenAIBase {
					return srv.OpenAIBaseURL()
				}
				return env(k)
			}
			return openai.New(cfg)
		},
	})
}
