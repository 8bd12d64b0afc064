package mission

import (
	"context"
	"fmt"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/registry"
)

// AdapterFunc builds the model adapter that serves a model id.
type AdapterFunc func(model string) (provider.Adapter, error)

// registryAdapter is the default AdapterFunc: the provider that serves the
// model (registry.ProviderFor), configured from getenv.
func registryAdapter(getenv func(string) string) AdapterFunc {
	return func(model string) (provider.Adapter, error) {
		id, ok := registry.ProviderFor(model)
		if !ok {
			return nil, fmt.Errorf("no provider serves model %q", model)
		}
		return registry.New(id, provider.Config{Getenv: getenv})
	}
}

// checkModel refuses, before a mission is created, a model no provider
// serves, one its provider does not know, a local model that cannot call
// tools, and a scripted model that would go to a real provider
// (provider.ModelChecker). It is the same check on every front end.
func (s *Service) checkModel(ctx context.Context, model string) error {
	a, err := s.opts.Adapter(model)
	if err != nil {
		return invalid("model %s cannot run a mission: %v", model, err)
	}
	if c, ok := a.(provider.ModelChecker); ok {
		if err := c.CheckModel(ctx, model); err != nil {
			return invalid("model %s cannot run a mission: %v", model, err)
		}
	}
	return nil
}
