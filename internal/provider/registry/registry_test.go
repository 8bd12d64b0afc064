package registry_test

import (
	"errors"
	"testing"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/registry"
)

func TestNew(t *testing.T) {
	t.Parallel()
	for _, id := range []provider.ID{provider.Anthropic, provider.OpenAI, provider.Compat} {
		a, err := registry.New(id, provider.Config{BaseURL: "http://127.0.0.1:1/v1"})
		if err != nil || a.ID() != id {
			t.Errorf("%s: %v %v", id, a, err)
		}
	}
	if _, err := registry.New("mistral", provider.Config{}); !errors.Is(err, registry.ErrUnknownProvider) {
		t.Errorf("unknown: %v", err)
	}
	if _, err := registry.New(provider.Compat, provider.Config{}); err == nil {
		t.Errorf("compat without base URL accepted")
	}
}

func TestProviderFor(t *testing.T) {
	t.Parallel()
	cases := map[string]provider.ID{
		"claude-haiku-5-5": provider.Anthropic, "gpt-6-luna": provider.OpenAI, "claude-x": provider.Anthropic,
		"gpt-7": provider.OpenAI, "o5-mini": provider.OpenAI, "script:echo": provider.Anthropic, "llama3": "",
	}
	for model, want := range cases {
		if got, _ := registry.ProviderFor(model); got != want {
			t.Errorf("%s: got %q want %q", model, got, want)
		}
	}
}
