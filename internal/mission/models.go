package mission

import (
	"context"
	"errors"
	"github.com/aos-run/aos/internal/wire"
	"sync"
	"time"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/registry"
)

// Model is wire.Model, its JSON form on the API.
type Model = wire.Model

// Cache lifetimes of the model list: a full answer for 10 minutes, one
// that holds an error for 1 minute.
const (
	modelsTTL      = 10 * time.Minute
	modelsErrorTTL = time.Minute
)

// modelCache holds the last model list.
type modelCache struct {
	mu      sync.Mutex
	models  []Model   // guarded by mu
	expires time.Time // guarded by mu
}

// ListModels returns the models of the Anthropic and OpenAI providers,
// cached. Keys and base URLs come from the environment through
// Options.Getenv; a key is never part of the answer.
func (s *Service) ListModels(ctx context.Context) ([]Model, error) {
	s.models.mu.Lock()
	defer s.models.mu.Unlock()
	if s.models.models != nil && s.now().Before(s.models.expires) {
		return s.models.models, nil
	}
	var out []Model
	failed := false
	for _, id := range []provider.ID{provider.Anthropic, provider.OpenAI} {
		ms, note := s.providerModels(ctx, id)
		if note != "" {
			failed = true
		}
		out = append(out, ms...)
	}
	ttl := modelsTTL
	if failed {
		ttl = modelsErrorTTL
	}
	s.models.models, s.models.expires = out, s.now().Add(ttl)
	return out, nil
}

func (s *Service) providerModels(ctx context.Context, id provider.ID) ([]Model, string) {
	var infos []provider.ModelInfo
	note := ""
	a, err := registry.New(id, provider.Config{Getenv: s.opts.Getenv, Retry: provider.RetryPolicy{MaxAttempts: 2}})
	if err == nil {
		lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		infos, err = a.ListModels(lctx)
		cancel()
	}
	var mk *provider.MissingKeyError
	switch {
	case errors.As(err, &mk):
		note = "no API key: set " + mk.EnvVar
	case err != nil:
		note = "the provider's model list could not be read"
		s.opts.Logger.Warn("list models failed", "provider", string(id), "err", err.Error())
	}
	if err != nil {
		infos = provider.MergeModels(id, nil, nil)
	}
	out := make([]Model, 0, len(infos))
	for _, m := range infos {
		v := Model{ID: m.ID, Provider: string(m.Provider), Tier: string(m.Tier), Label: m.Label, Price: wire.Price(m.Price), ContextWindow: m.ContextWindow, Note: note}
		if err == nil {
			avail := m.Available
			v.Available = &avail
		}
		out = append(out, v)
	}
	return out, note
}
