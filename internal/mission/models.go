package mission

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/registry"
)

// Model is a model as the API shows it: the catalogue's data merged with
// the provider's live list.
type Model struct {
	ID            string         `json:"id"`
	Provider      string         `json:"provider"`
	Tier          string         `json:"tier,omitempty"`
	Label         string         `json:"label,omitempty"`
	Price         provider.Price `json:"price"`
	ContextWindow int64          `json:"contextWindow,omitempty"`
	// Available is null when it is not known: no key for the provider, or
	// its model list could not be read. aos never guesses it.
	Available *bool  `json:"available"`
	Note      string `json:"note,omitempty"`
}

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
		v := Model{ID: m.ID, Provider: string(m.Provider), Tier: string(m.Tier), Label: m.Label, Price: m.Price, ContextWindow: m.ContextWindow, Note: note}
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
			Label: m.Label, Price: m.Price, ContextWindow: m.ContextWindow, Available: &avail})
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

// DefaultModelCheckTimeout bounds the model check at mission creation; a
// local endpoint's probe may have to wait for the model to load.
const DefaultModelCheckTimeout = 60 * time.Second

// checkModel refuses a model that cannot run a mission: no provider
// serves it, it cannot call tools, a scripted model would go to a real
// provider, or the local endpoint is not configured or does not answer.
// Adapters without a check pass.
func (s *Service) checkModel(ctx context.Context, model string) error {
	id, ok := registry.ProviderFor(model)
	if !ok {
		return invalid("no provider serves model %q: use a catalogue model (aos models), script:NAME or local:NAME", model)
	}
	var a provider.Adapter
	var base string
	var err error
	if id == provider.Compat {
		a, base, err = s.localAdapter(ctx, provider.RetryPolicy{MaxAttempts: 1}, false)
	} else {
		a, err = registry.New(id, provider.Config{Getenv: s.opts.Getenv})
	}
	if errors.Is(err, provider.ErrNoLocalEndpoint) {
		return &Error{Code: CodeModelUnavailable, Msg: err.Error(), Err: err}
	}
	var me *Error
	if errors.As(err, &me) {
		return err
	}
	if err != nil {
		return fmt.Errorf("mission: check model %s: %w", model, err)
	}
	c, ok := a.(provider.ModelChecker)
	if !ok {
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, s.opts.ModelCheckTimeout)
	defer cancel()
	err = c.CheckModel(cctx, model)
	var se *provider.ScriptedModelError
	switch {
	case err == nil:
		return nil
	case id == provider.Compat && cctx.Err() != nil && ctx.Err() == nil:
		// The endpoint answers but the probe is slow: a local server may be
		// loading a large model on first use. The mission is created and
		// its first turn tells.
		s.opts.Logger.Warn("local model check timed out; the mission is created unchecked", "model", model, "endpoint", redactURL(base))
		return nil
	case errors.Is(err, provider.ErrToolsUnsupported):
		return &Error{Code: CodeInvalidInput, Msg: fmt.Sprintf("model %s cannot call tools, which every mission needs", model), Err: err}
	case errors.Is(err, provider.ErrUnknownModel):
		return &Error{Code: CodeInvalidInput, Msg: fmt.Sprintf("model %s is not known to its provider (aos models lists them)", model), Err: err}
	case errors.As(err, &se):
		return &Error{Code: CodeInvalidInput, Msg: se.Error(), Err: err}
	case id == provider.Compat:
		return &Error{Code: CodeModelUnavailable, Msg: fmt.Sprintf("model %s: the local endpoint %s did not answer: %s", model, redactURL(base), shortErr(err)), Err: err}
	}
	return &Error{Code: CodeModelUnavailable, Msg: fmt.Sprintf("model %s could not be checked: %s", model, shortErr(err)), Err: err}
}
