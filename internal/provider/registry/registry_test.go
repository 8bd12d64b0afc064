package registry_test

import (
	"errors"
	"net/http"
	"strings"
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
		"local:qwen3-coder": provider.Compat, "local:claude-haiku-5-5": provider.Compat, "local:": "",
	}
	for model, want := range cases {
		if got, _ := registry.ProviderFor(model); got != want {
			t.Errorf("%s: got %q want %q", model, got, want)
		}
	}
}

// failTransport fails the test if any request is sent.
type failTransport struct{ t *testing.T }

func (f failTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f.t.Errorf("a request was sent to %s", r.URL)
	return nil, errors.New("no network in this test")
}

// TestScriptedModelNeedsTheScriptServer: a scripted model with no base URL
// configured is refused at once by CheckModel and by Call, with the variable
// to set, and nothing is sent to the real provider; with a base URL it is
// accepted.
func TestScriptedModelNeedsTheScriptServer(t *testing.T) {
	for _, tc := range []struct {
		id  provider.ID
		env string
	}{{provider.Anthropic, provider.EnvAnthropicBase}, {provider.OpenAI, provider.EnvOpenAIBase}} {
		t.Run(string(tc.id), func(t *testing.T) {
			for _, key := range []string{"", "sk-real"} {
				a, err := registry.New(tc.id, provider.Config{HTTPClient: &http.Client{Transport: failTransport{t}},
					Getenv: func(n string) string {
						if strings.HasSuffix(n, "_API_KEY") {
							return key
						}
						return ""
					}})
				if err != nil {
					t.Fatal(err)
				}
				var se *provider.ScriptedModelError
				if err := a.(provider.ModelChecker).CheckModel(t.Context(), "script:demo"); !errors.As(err, &se) || !strings.Contains(err.Error(), tc.env) {
					t.Errorf("key %q: CheckModel = %v, want a ScriptedModelError naming %s", key, err, tc.env)
				}
				_, err = a.Call(t.Context(), provider.Request{Model: "script:demo", Transcript: a.InitTranscript("hi")})
				if !errors.As(err, &se) {
					t.Errorf("key %q: Call = %v, want a ScriptedModelError", key, err)
				}
			}
			served, err := registry.New(tc.id, provider.Config{BaseURL: "http://127.0.0.1:1", Getenv: func(string) string { return "" }})
			if err != nil {
				t.Fatal(err)
			}
			if err := served.(provider.ModelChecker).CheckModel(t.Context(), "script:demo"); err != nil {
				t.Errorf("with a base URL: CheckModel = %v", err)
			}
		})
	}
}
