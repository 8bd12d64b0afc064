package mission

import (
	"context"
	"strings"

	"github.com/aos-run/aos/internal/provider"
)

// keyedProviders are the providers a default model can come from, in the
// order they are tried, with the variable that holds each one's API key.
var keyedProviders = []struct {
	id  provider.ID
	key string
}{
	{provider.Anthropic, provider.EnvAnthropicKey},
	{provider.OpenAI, provider.EnvOpenAIKey},
}

// errNoModel says that a mission names no model and none can be chosen for
// it, and how to choose one.
func errNoModel() error {
	return invalid("no model given, no default model set, and no model is available (no provider API key is set): " +
		"give one (--model ID, or \"model\" in the request), set a default (aos settings set --default-model ID), " +
		"or set ANTHROPIC_API_KEY or OPENAI_API_KEY, or point AOS_LOCAL_BASE_URL at a reachable local model server; aos models lists the models. " +
		"Without a key, run the scripted model server (aos dev model-server) and use --model script:NAME")
}

// availableModel returns the default model of the first available
// provider (Anthropic, then OpenAI): one whose API key is set; else the
// first model a configured local endpoint (the localBaseUrl setting or
// AOS_LOCAL_BASE_URL) lists when it answers now. A base URL alone does not
// make Anthropic or OpenAI available: the scripted model server behind
// ANTHROPIC_BASE_URL serves only script:NAME models, which a mission must
// name. With none, it returns an invalid-input error that says how to
// choose a model.
func (s *Service) availableModel(ctx context.Context) (string, error) {
	for _, p := range keyedProviders {
		if s.opts.Getenv(p.key) == "" {
			continue
		}
		for _, m := range provider.Catalogue() {
			if m.Provider == p.id && m.Default {
				return m.ID, nil
			}
		}
	}
	if id := s.reachableLocalModel(ctx); id != "" {
		return id, nil
	}
	return "", errNoModel()
}

// reachableLocalModel returns the first available model the local
// endpoint lists ("local:NAME"), or "" when no endpoint is configured or it
// does not answer (localModels bounds the wait and logs why). Scripted
// models a scripted server lists are never chosen: a mission names them.
func (s *Service) reachableLocalModel(ctx context.Context) string {
	models, _ := s.localModels(ctx)
	for _, m := range models {
		if m.Available != nil && *m.Available && m.ID != localModelsPlaceholder && !provider.IsScripted(strings.TrimPrefix(m.ID, provider.LocalPrefix)) {
			return m.ID
		}
	}
	return ""
}
