package openai

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/aos-run/aos/internal/provider"
)

// DefaultBaseURL is the OpenAI API base URL.
const DefaultBaseURL = "https://api.openai.com/v1"

// Adapter is the OpenAI Responses provider. It is safe for concurrent use.
type Adapter struct {
	cfg    provider.Config
	prices provider.PriceBook
	key    string
	client sdk.Client
	// real is set when the adapter talks to the provider's own API (no
	// base URL configured): scripted models are refused there.
	real bool
}

var (
	_ provider.Adapter      = (*Adapter)(nil)
	_ provider.ModelChecker = (*Adapter)(nil)
)

// New returns an adapter configured by cfg. The API key is read from
// OPENAI_API_KEY (through cfg.Getenv); a missing key is reported by Call and
// ListModels as a *provider.MissingKeyError. The SDK's retries are off:
// aos retries with its own policy.
func New(cfg provider.Config) *Adapter {
	if cfg.KeyEnv == "" {
		cfg.KeyEnv = provider.EnvOpenAIKey
	}
	base := cfg.BaseURL
	if base == "" {
		base = cfg.Env(provider.EnvOpenAIBase)
	}
	real := base == ""
	if real {
		base = DefaultBaseURL
	}
	a := &Adapter{cfg: cfg, prices: cfg.Prices(), key: cfg.Env(cfg.KeyEnv), real: real}
	a.client = NewClient(base, a.key, cfg.HTTPClient)
	return a
}

// NewClient returns an SDK client for base with key (possibly empty), with
// the SDK's retries off. Explicit options override whatever the SDK read
// from the process environment.
func NewClient(base, key string, hc *http.Client) sdk.Client {
	if hc == nil {
		hc = &http.Client{}
	}
	return sdk.NewClient(
		option.WithBaseURL(base),
		option.WithAPIKey(key),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	)
}

// AttemptOption tells the server which retry this is (0 for the first
// attempt) through the SDK's own retry-count header.
func AttemptOption(n int) option.RequestOption {
	return option.WithHeader(provider.AttemptHeader, strconv.Itoa(n-1))
}

// ID implements provider.Adapter.
func (a *Adapter) ID() provider.ID { return provider.OpenAI }

// Price implements provider.Adapter.
func (a *Adapter) Price(model string, u provider.Usage) float64 { return a.prices.Price(model, u) }

func (a *Adapter) checkKey() error { return a.cred().Check() }

// cred is the adapter's provider.Credential.
func (a *Adapter) cred() provider.Credential {
	return provider.Credential{Provider: provider.OpenAI, Key: a.key, KeyEnv: a.cfg.KeyEnv, BaseEnv: provider.EnvOpenAIBase, Real: a.real}
}

// ListModels implements provider.Adapter.
func (a *Adapter) ListModels(ctx context.Context) ([]provider.ModelInfo, error) {
	if err := a.checkKey(); err != nil {
		return nil, err
	}
	live, err := ListLive(ctx, a.client, a.cfg.Retry, provider.OpenAI, a.key)
	if err != nil {
		return nil, fmt.Errorf("list openai models: %w", err)
	}
	return provider.MergeModels(provider.OpenAI, live, a.cfg.Models), nil
}

// ListLive returns the model IDs the endpoint lists.
func ListLive(ctx context.Context, c sdk.Client, p provider.RetryPolicy, id provider.ID, key string) ([]string, error) {
	var live []string
	_, err := p.Do(ctx, func(ctx context.Context, n int) error {
		live = live[:0]
		pager := c.Models.ListAutoPaging(ctx, AttemptOption(n))
		for pager.Next() {
			live = append(live, pager.Current().ID)
		}
		if err := pager.Err(); err != nil {
			return MapError(id, err, key)
		}
		return nil
	})
	return live, err
}

// CheckModel implements provider.ModelChecker.
func (a *Adapter) CheckModel(_ context.Context, model string) error {
	if provider.IsScripted(model) {
		return a.scriptedServed(model)
	}
	if _, ok := a.cfg.Model(model); !ok {
		return fmt.Errorf("openai model %q: %w", model, provider.ErrUnknownModel)
	}
	return nil
}

// scriptedServed refuses a scripted model when the adapter would send it to
// the provider's real API.
func (a *Adapter) scriptedServed(model string) error { return a.cred().Served(model) }
