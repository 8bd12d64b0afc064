package provider

import (
	"net/http"
	"slices"
	"time"
)

// The environment variables adapters read. Keys come from here only.
const (
	EnvAnthropicKey  = "ANTHROPIC_API_KEY"
	EnvAnthropicBase = "ANTHROPIC_BASE_URL"
	EnvOpenAIKey     = "OPENAI_API_KEY"
	EnvOpenAIBase    = "OPENAI_BASE_URL"
)

// Config configures an adapter. API keys are not part of it: they are read
// from the environment, through Getenv, and nowhere else.
type Config struct {
	// BaseURL overrides the provider's base URL (and its *_BASE_URL
	// variable). The Anthropic base URL has no /v1; OpenAI's ends in /v1.
	BaseURL string
	// Getenv reads the environment the CLI's root passed down; nil means
	// an empty environment (no keys). Tests pass a function over a map.
	Getenv func(string) string
	// KeyEnv overrides the name of the API key variable (compat endpoints
	// often need none: leave it empty there).
	KeyEnv string
	// HTTPClient is the client the SDK uses; nil means a default client.
	HTTPClient *http.Client
	// Retry is the retry policy; zero fields take DefaultRetryPolicy().
	Retry RetryPolicy
	// Models adds models to the catalogue: local models of a compat
	// endpoint, or a priced scripted model. Their prices are used by Price.
	Models []ModelInfo
	// MaxOutputTokens is the default output cap (Anthropic 64000).
	MaxOutputTokens int64
	// IdleTimeout abandons (and retries) an attempt whose stream sends
	// nothing for this long: 0 means DefaultIdleTimeout, negative never.
	IdleTimeout time.Duration
}

// Env returns the value of the environment variable name through
// c.Getenv, or "" when it is nil.
func (c Config) Env(name string) string {
	if name == "" {
		return ""
	}
	if c.Getenv != nil {
		return c.Getenv(name)
	}
	return ""
}

// Prices returns the price book for this configuration: the catalogue
// overlaid with c.Models.
func (c Config) Prices() PriceBook { return NewPriceBook(c.Models...) }

// Model returns the configured or catalogue entry for model.
func (c Config) Model(model string) (ModelInfo, bool) {
	if i := slices.IndexFunc(c.Models, func(m ModelInfo) bool { return m.ID == model }); i >= 0 {
		return c.Models[i], true
	}
	return CatalogueModel(model)
}

// Append returns t extended by entries without sharing t's spare capacity,
// so that two transcripts derived from one prefix never overwrite each
// other's entries.
func Append(t Transcript, entries ...[]byte) Transcript {
	out := make(Transcript, len(t), len(t)+len(entries))
	copy(out, t)
	for _, e := range entries {
		out = append(out, e)
	}
	return out
}

// OperatorNotePrefix and OperatorNoteSuffix delimit an operator note sent
// as a user message, to a model without mid-conversation system messages.
const (
	OperatorNotePrefix = "<aos-operator-note>\nThis note comes from aos, the system running you, not from the user.\n"
	OperatorNoteSuffix = "\n</aos-operator-note>"
)

// OperatorNoteText wraps text as a delimited operator note.
func OperatorNoteText(text string) string { return OperatorNotePrefix + text + OperatorNoteSuffix }
