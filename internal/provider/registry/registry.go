// Package registry builds model adapters by provider ID, so that callers
// (the engine, the CLI) need not import every adapter package. It holds no
// state: each call builds a new adapter from its configuration.
package registry

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/anthropic"
	"github.com/aos-run/aos/internal/provider/compat"
	"github.com/aos-run/aos/internal/provider/openai"
)

// ErrUnknownProvider is returned for a provider ID aos does not know.
var ErrUnknownProvider = errors.New("unknown provider")

// New builds the adapter for id.
func New(id provider.ID, cfg provider.Config) (provider.Adapter, error) {
	switch id {
	case provider.Anthropic:
		return anthropic.New(cfg), nil
	case provider.OpenAI:
		return openai.New(cfg), nil
	case provider.Compat:
		a, err := compat.New(cfg)
		if err != nil {
			return nil, err
		}
		return a, nil
	}
	return nil, fmt.Errorf("provider %q: %w", id, ErrUnknownProvider)
}

// ProviderFor returns the provider that serves model: the catalogue's,
// else by name ("local:*" the OpenAI-compatible local endpoint, "claude-*"
// Anthropic, "gpt-*", "o<digit>*" OpenAI). A scripted model ("script:*") can be served by any provider; it returns
// scripted, the caller picks (Anthropic by default).
func ProviderFor(model string) (id provider.ID, ok bool) {
	if provider.IsLocal(model) {
		if provider.LocalName(model) == "" {
			return "", false
		}
		return provider.Compat, true
	}
	if id, ok := provider.ProviderOf(model); ok {
		return id, true
	}
	switch {
	case provider.IsScripted(model):
		return provider.Anthropic, true
	case strings.HasPrefix(model, "claude-"):
		return provider.Anthropic, true
	case strings.HasPrefix(model, "gpt-"), len(model) > 1 && model[0] == 'o' && model[1] >= '0' && model[1] <= '9':
		return provider.OpenAI, true
	}
	return "", false
}
