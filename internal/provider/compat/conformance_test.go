package compat_test

import (
	"testing"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/compat"
	"github.com/aos-run/aos/internal/provider/providertest"
	"github.com/aos-run/aos/internal/provider/script"
)

// TestConformance runs the adapters' conformance suite against the
// OpenAI-compatible (Chat Completions) adapter of local models, with a key
// in AOS_LOCAL_API_KEY as a local server behind a proxy would need.
func TestConformance(t *testing.T) {
	t.Parallel()
	providertest.Exercise(t, providertest.Target{
		ID: provider.Compat, KeyEnv: provider.EnvLocalKey, Overloaded: 503,
		New: func(t *testing.T, srv *script.Server, cfg provider.Config) provider.Adapter {
			cfg.BaseURL, cfg.KeyEnv = srv.OpenAIBaseURL(), provider.EnvLocalKey
			a, err := compat.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			return a
		},
	})
}
