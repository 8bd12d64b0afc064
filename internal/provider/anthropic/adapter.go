package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/aos-run/aos/internal/provider"
)

// DefaultMaxTokens is the output cap when neither the request nor the
// configuration sets one. Streaming makes a large cap safe.
const DefaultMaxTokens = 64000

// DefaultBaseURL is the Anthropic API root.
const DefaultBaseURL = "https://api.anthropic.com"

// Adapter is the Anthropic Messages provider. It is safe for concurrent use.
type Adapter struct {
	cfg    provider.Config
	prices provider.PriceBook
	key    string
	client sdk.Client
	// real is set when the adapter talks to the provider's own API (no
	// base URL configured): scripted models are refused there.
	real bool
	// last is the last request's encoded parameters (see Body).
	last atomic.Pointer[encoded]
}

var (
	_ provider.Adapter      = (*Adapter)(nil)
	_ provider.ModelChecker = (*Adapter)(nil)
)

// New returns an adapter configured by cfg. The API key is read from
// ANTHROPIC_API_KEY (through cfg.Getenv) now; a missing key is reported by
// Call and ListModels as a *provider.MissingKeyError, so that a catalogue
// can still be listed offline. The SDK's own environment defaults and
// retries are disabled: aos configures and retries explicitly.
func New(cfg provider.Config) *Adapter {
	keyEnv := cfg.KeyEnv
	if keyEnv == "" {
		keyEnv = provider.EnvAnthropicKey
	}
	base := cfg.BaseURL
	if base == "" {
		base = cfg.Env(provider.EnvAnthropicBase)
	}
	real := base == ""
	if real {
		base = DefaultBaseURL
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	a := &Adapter{cfg: cfg, prices: cfg.Prices(), key: cfg.Env(keyEnv), real: real}
	a.cfg.KeyEnv = keyEnv
	a.client = sdk.NewClient(
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base),
		option.WithAPIKey(a.key),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	)
	return a
}

// ID implements provider.Adapter.
func (a *Adapter) ID() provider.ID { return provider.Anthropic }

// Price implements provider.Adapter.
func (a *Adapter) Price(model string, u provider.Usage) float64 { return a.prices.Price(model, u) }

func (a *Adapter) checkKey() error { return a.cred().Check() }

// cred is the adapter's provider.Credential.
func (a *Adapter) cred() provider.Credential {
	return provider.Credential{Provider: provider.Anthropic, Key: a.key, KeyEnv: a.cfg.KeyEnv, BaseEnv: provider.EnvAnthropicBase, Real: a.real}
}

// model returns what aos knows of model: configuration, then catalogue.
func (a *Adapter) model(model string) provider.ModelInfo {
	m, _ := a.cfg.Model(model)
	return m
}

// ListModels implements provider.Adapter: the live Models API list merged
// with the catalogue and the configured models.
func (a *Adapter) ListModels(ctx context.Context) ([]provider.ModelInfo, error) {
	if err := a.checkKey(); err != nil {
		return nil, err
	}
	var live []string
	_, err := a.cfg.Retry.Do(ctx, func(ctx context.Context, n int) error {
		live = live[:0]
		pager := a.client.Models.ListAutoPaging(ctx, sdk.ModelListParams{}, attemptOption(n))
		for pager.Next() {
			live = append(live, pager.Current().ID)
		}
		if err := pager.Err(); err != nil {
			return a.mapError(err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list anthropic models: %w", err)
	}
	return provider.MergeModels(provider.Anthropic, live, a.cfg.Models), nil
}

// CheckModel implements provider.ModelChecker: the model must be known
// (catalogue or configuration) or scripted. Every Claude model calls tools.
func (a *Adapter) CheckModel(_ context.Context, model string) error {
	if provider.IsScripted(model) {
		return a.scriptedServed(model)
	}
	if _, ok := a.cfg.Model(model); !ok {
		return fmt.Errorf("anthropic model %q: %w", model, provider.ErrUnknownModel)
	}
	return nil
}

// scriptedServed refuses a scripted model when the adapter would send it to
// the provider's real API.
func (a *Adapter) scriptedServed(model string) error { return a.cred().Served(model) }
