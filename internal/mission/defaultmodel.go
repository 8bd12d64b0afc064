package mission

import (
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
		"or set ANTHROPIC_API_KEY or OPENAI_API_KEY; aos models lists the models. " +
		"Without a key, run the scripted model server (aos dev model-server) and use --model script:NAME")
}

// availableModel returns the default model of the first available
// provider (Anthropic, then OpenAI): one whose API key is set. A base URL
// alone does not make a provider available: the scripted model server
// behind ANTHROPIC_BASE_URL serves only script:NAME models, which a mission
// must name. With none, it returns an invalid-input error that says how to
// choose a model.
func (s *Service) availableModel() (string, error) {
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
	return "", errNoModel()
}
