package compat

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/openai"
)

// Adapter is the Chat Completions provider. It is safe for concurrent use.
type Adapter struct {
	cfg    provider.Config
	key    string
	client sdk.Client
}

var (
	_ provider.Adapter      = (*Adapter)(nil)
	_ provider.ModelChecker = (*Adapter)(nil)
)

// ErrNoBaseURL is returned by New when no base URL is configured.
var ErrNoBaseURL = errors.New("compat: a base URL is required (for example http://127.0.0.1:11434/v1 for Ollama)")

// New returns an adapter for the endpoint at cfg.BaseURL. The key, if any,
// comes from the variable named by cfg.KeyEnv; with no KeyEnv no key is sent
// (the OpenAI key is never sent to a local endpoint).
func New(cfg provider.Config) (*Adapter, error) {
	if cfg.BaseURL == "" {
		return nil, ErrNoBaseURL
	}
	a := &Adapter{cfg: cfg, key: cfg.Env(cfg.KeyEnv)}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	a.client = openai.NewClient(cfg.BaseURL, a.key, hc)
	return a, nil
}

// ID implements provider.Adapter.
func (a *Adapter) ID() provider.ID { return provider.Compat }

// Price implements provider.Adapter: configured prices, else zero.
func (a *Adapter) Price(model string, u provider.Usage) float64 {
	m, ok := a.configured(model)
	if !ok {
		return 0
	}
	return m.Price.Cost(u)
}

// configured returns the configured entry of model, with or without the
// "local:" prefix on either side.
func (a *Adapter) configured(model string) (provider.ModelInfo, bool) {
	for _, m := range a.cfg.Models {
		if provider.LocalName(m.ID) == provider.LocalName(model) {
			return m, true
		}
	}
	return provider.ModelInfo{}, false
}

// ListModels implements provider.Adapter: the configured models, marked
// available when the endpoint lists them, plus what else it lists.
func (a *Adapter) ListModels(ctx context.Context) ([]provider.ModelInfo, error) {
	live, err := openai.ListLive(ctx, a.client, a.cfg.Retry, provider.Compat, a.key)
	if err != nil {
		return nil, fmt.Errorf("list compat models: %w", err)
	}
	liveSet := map[string]bool{}
	for _, l := range live {
		liveSet[l] = true
	}
	var out []provider.ModelInfo
	for _, m := range a.cfg.Models {
		name := provider.LocalName(m.ID) // configured as "local:NAME" or NAME
		m.Provider, m.Available = provider.Compat, liveSet[name]
		if m.Tier == "" {
			m.Tier = provider.TierLocal
		}
		delete(liveSet, name)
		out = append(out, m)
	}
	for _, l := range live {
		if liveSet[l] {
			out = append(out, provider.ModelInfo{ID: l, Provider: provider.Compat, Tier: provider.TierLocal, Available: true})
		}
	}
	return out, nil
}

// CheckModel implements provider.ModelChecker. A configured model says
// whether it calls tools; an unconfigured one is probed with a one-token
// request that offers a tool: an endpoint that rejects tools for that
// model (Ollama: "does not support tools") fails the check.
func (a *Adapter) CheckModel(ctx context.Context, model string) error {
	if m, ok := a.configured(model); ok {
		if !m.Tools {
			return fmt.Errorf("compat model %q: %w (configured tools: false)", model, provider.ErrToolsUnsupported)
		}
		return nil
	}
	params := sdk.ChatCompletionNewParams{
		Model:     provider.LocalName(model),
		Messages:  []sdk.ChatCompletionMessageParamUnion{sdk.UserMessage("ping")},
		MaxTokens: param.NewOpt[int64](1),
		Tools: []sdk.ChatCompletionToolUnionParam{{OfFunction: &sdk.ChatCompletionFunctionToolParam{
			Function: sdk.FunctionDefinitionParam{Name: "noop", Parameters: sdk.FunctionParameters{"type": "object", "properties": map[string]any{}}},
		}}},
	}
	_, err := a.client.Chat.Completions.New(ctx, params)
	if err == nil {
		return nil
	}
	pe := openai.MapError(provider.Compat, err, a.key)
	var perr *provider.ProviderError
	if errors.As(pe, &perr) && perr.Status >= 400 && perr.Status < 500 {
		msg := strings.ToLower(perr.Message)
		if strings.Contains(msg, "tool") || strings.Contains(msg, "function") {
			return fmt.Errorf("compat model %q: %w: %s", model, provider.ErrToolsUnsupported, perr.Message)
		}
		if perr.Status == 404 || strings.Contains(msg, "not found") {
			return fmt.Errorf("compat model %q: %w: %s", model, provider.ErrUnknownModel, perr.Message)
		}
	}
	return fmt.Errorf("compat model %q: probe: %w", model, pe)
}
