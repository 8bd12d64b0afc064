package mission

import (
	"context"
	"errors"
	"net/url"
	"sync"
	"time"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/registry"
	"github.com/aos-run/aos/internal/wire"
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

// ListModels returns the models of the Anthropic and OpenAI providers and
// of the local endpoint, cached. Keys and base URLs come from the environment through
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
	local, note := s.localModels(ctx)
	failed = failed || note != ""
	out = append(out, local...)
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

// forgetModels drops the cached model list.
func (s *Service) forgetModels() {
	s.models.mu.Lock()
	s.models.models = nil
	s.models.mu.Unlock()
}

// localBase returns the local endpoint: the setting, else
// AOS_LOCAL_BASE_URL; "" when neither is set.
func (s *Service) localBase(ctx context.Context) (string, error) {
	var setting string
	if _, err := s.setting(ctx, provider.SettingLocalBaseURL, &setting); err != nil {
		return "", err
	}
	return provider.LocalBaseURL(setting, s.opts.Getenv), nil
}

// localAdapter builds the compat adapter of the local endpoint, with the
// prices of AOS_LOCAL_PRICES when priced is set (the model list; the check
// leaves them out, so that it probes every model for tools).
func (s *Service) localAdapter(ctx context.Context, retry provider.RetryPolicy, priced bool) (provider.Adapter, string, error) {
	base, err := s.localBase(ctx)
	if err != nil {
		return nil, "", err
	}
	if base == "" {
		return nil, "", provider.ErrNoLocalEndpoint
	}
	if err := provider.CheckLocalBaseURL(base); err != nil {
		return nil, "", &Error{Code: CodeModelUnavailable, Msg: err.Error() + " (" + provider.EnvLocalBase + " or the localBaseUrl setting)"}
	}
	models, err := provider.ParseLocalPrices(s.opts.Getenv(provider.EnvLocalPrices))
	if err != nil {
		return nil, "", &Error{Code: CodeModelUnavailable, Msg: err.Error()}
	}
	if !priced {
		models = nil
	}
	a, err := registry.New(provider.Compat, provider.Config{BaseURL: base, Getenv: s.opts.Getenv, KeyEnv: provider.EnvLocalKey, Retry: retry, Models: models})
	return a, base, err
}

// localModelsPlaceholder is the id listed, unavailable, for a local
// endpoint whose models could not be read.
const localModelsPlaceholder = provider.LocalPrefix + "*"

// localModels lists the local endpoint's models as "local:NAME", all
// available at price 0. No endpoint lists nothing; an endpoint that does
// not answer is one entry, "local:*", unavailable, whose note says why:
// the rest of the list is still served.
func (s *Service) localModels(ctx context.Context) ([]Model, string) {
	a, base, err := s.localAdapter(ctx, provider.RetryPolicy{MaxAttempts: 1}, true)
	if errors.Is(err, provider.ErrNoLocalEndpoint) {
		return nil, ""
	}
	var infos []provider.ModelInfo
	if err == nil {
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		infos, err = a.ListModels(lctx)
		cancel()
	}
	if err != nil {
		s.opts.Logger.Warn("list local models failed", "endpoint", redactURL(base), "err", err.Error())
		no := false
		note := "the local endpoint " + redactURL(base) + " did not answer: " + shortErr(err)
		return []Model{{ID: localModelsPlaceholder, Provider: string(provider.Compat), Tier: string(provider.TierLocal), Available: &no, Note: note}}, note
	}
	out := make([]Model, 0, len(infos))
	for _, m := range infos {
		avail := m.Available
		out = append(out, Model{ID: provider.LocalPrefix + provider.LocalName(m.ID), Provider: string(provider.Compat), Tier: string(provider.TierLocal),
			Label: m.Label, Price: wire.Price(m.Price), ContextWindow: m.ContextWindow, Available: &avail})
	}
	return out, ""
}

// redactURL returns u's scheme, host and path: never credentials or a
// query.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(an invalid URL)"
	}
	return (&url.URL{Scheme: p.Scheme, Host: p.Host, Path: p.Path}).String()
}

// shortErr returns the last part of a wrapped error's text, the cause a
// person can act on ("connection refused"), at most 200 bytes.
func shortErr(err error) string {
	msg := err.Error()
	var pe *provider.ProviderError
	if errors.As(err, &pe) {
		msg = pe.Code
		if pe.Message != "" {
			msg += ": " + pe.Message
		}
	}
	if len(msg) > 200 {
		msg = msg[:200] + "…"
	}
	return msg
}
