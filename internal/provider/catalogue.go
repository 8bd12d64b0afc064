package provider

import (
	"math"
	"strings"
)

// Tier is a model's role in aos's line-up.
type Tier string

// The tiers of seed §3.
const (
	TierFrontier Tier = "frontier"
	TierMain     Tier = "main"
	TierWorker   Tier = "worker"
	TierVolume   Tier = "volume"
	TierLocal    Tier = "local"
	TierScripted Tier = "scripted"
)

// Price is a model's price in USD per million tokens. CacheWrite is the
// 5-minute cache write price.
type Price struct {
	Input      float64 `json:"input" yaml:"input"`
	Output     float64 `json:"output" yaml:"output"`
	CacheRead  float64 `json:"cacheRead" yaml:"cache_read"`
	CacheWrite float64 `json:"cacheWrite" yaml:"cache_write"`
}

// IsZero reports whether every price is zero.
func (p Price) IsZero() bool { return p == Price{} }

// Cost returns the USD cost of u at price p. It is computed exactly in
// integer pico-dollars (prices are rounded to the micro-dollar per MTok,
// far below any listed price's precision) and converted once, so that for
// example 1M input tokens at $0.10 is exactly 0.1.
func (p Price) Cost(u Usage) float64 {
	pico := u.InputTokens*micro(p.Input) +
		u.OutputTokens*micro(p.Output) +
		u.CacheReadTokens*micro(p.CacheRead) +
		u.CacheWriteTokens*micro(p.CacheWrite)
	// pico is in 1e-12 USD: tokens × (1e-6 USD / 1e6 tokens).
	return float64(pico) / 1e12
}

func micro(usdPerMTok float64) int64 { return int64(math.Round(usdPerMTok * 1e6)) }

// ModelInfo describes a model: the catalogue's data merged with what the
// provider says live.
type ModelInfo struct {
	ID       string `json:"id"`
	Provider ID     `json:"provider"`
	Tier     Tier   `json:"tier,omitempty"`
	Label    string `json:"label,omitempty"`
	Price    Price  `json:"price"`
	// Available is false for a catalogue model the provider's live list
	// does not contain. aos never substitutes another model for it.
	Available bool `json:"available"`
	// Default marks the provider's default model.
	Default bool `json:"default,omitempty"`
	// ContextWindow is the model's context in tokens, 0 if unknown.
	ContextWindow int64 `json:"contextWindow,omitempty"`
	// Tools says the model can call tools. Catalogue models can.
	Tools bool `json:"tools"`
	// SystemMessages says the model accepts mid-conversation system
	// messages (Anthropic role "system" in messages).
	SystemMessages bool `json:"systemMessages,omitempty"`
	// ServerFallback says the model supports Anthropic's server-side
	// fallback beta.
	ServerFallback bool `json:"serverFallback,omitempty"`
	// Scripted marks a model answered by aos's scripted model server.
	Scripted bool `json:"scripted,omitempty"`
}

// Catalogue returns the eight models of seed §3 with their prices. It
// returns a fresh slice on every call; it is data, seeded into the
// model_prices table by the store.
//
// Anthropic's cache write price is the 5-minute write, 1.25 × input.
// OpenAI does not bill cache writes separately, so its CacheWrite equals
// Input. SystemMessages and ServerFallback record what the provider
// documentation says for the 5.x generation (mid-conversation system turns
// from Opus 4.8 on; server-side fallback on Opus 5 and Fable 5.1 and later).
func Catalogue() []ModelInfo {
	return []ModelInfo{
		{ID: "claude-fable-5-2", Provider: Anthropic, Tier: TierFrontier, Label: "Claude Fable 5.2",
			Price: Price{Input: 8, Output: 40, CacheRead: 0.20, CacheWrite: 10}, ContextWindow: 1_000_000,
			Tools: true, SystemMessages: true, ServerFallback: true},
		{ID: "claude-opus-5-5", Provider: Anthropic, Tier: TierMain, Label: "Claude Opus 5.5", Default: true,
			Price: Price{Input: 4, Output: 20, CacheRead: 0.20, CacheWrite: 5}, ContextWindow: 1_000_000,
			Tools: true, SystemMessages: true, ServerFallback: true},
		{ID: "claude-sonnet-5-5", Provider: Anthropic, Tier: TierWorker, Label: "Claude Sonnet 5.5",
			Price: Price{Input: 2, Output: 10, CacheRead: 0.10, CacheWrite: 2.5}, ContextWindow: 1_000_000,
			Tools: true, SystemMessages: true},
		{ID: "claude-haiku-5-5", Provider: Anthropic, Tier: TierVolume, Label: "Claude Haiku 5.5",
			Price: Price{Input: 0.10, Output: 0.50, CacheRead: 0.01, CacheWrite: 0.125}, ContextWindow: 200_000,
			Tools: true, SystemMessages: true},
		{ID: "gpt-6-astra", Provider: OpenAI, Tier: TierFrontier, Label: "GPT-6 Astra",
			Price: Price{Input: 10, Output: 50, CacheRead: 1.00, CacheWrite: 10}, Tools: true},
		{ID: "gpt-6.1-sol", Provider: OpenAI, Tier: TierMain, Label: "GPT-6.1 Sol", Default: true,
			Price: Price{Input: 2, Output: 10, CacheRead: 0.10, CacheWrite: 2}, Tools: true},
		{ID: "gpt-6.1-terra", Provider: OpenAI, Tier: TierWorker, Label: "GPT-6.1 Terra",
			Price: Price{Input: 1, Output: 5, CacheRead: 0.05, CacheWrite: 1}, Tools: true},
		{ID: "gpt-6-luna", Provider: OpenAI, Tier: TierVolume, Label: "GPT-6 Luna",
			Price: Price{Input: 0.10, Output: 0.50, CacheRead: 0.01, CacheWrite: 0.10}, Tools: true},
	}
}

// ScriptedKey is the placeholder key the adapters send for a scripted model
// when no API key is set, so that the scripted model server (which ignores
// keys) works without one. It is never a secret.
const ScriptedKey = "aos-scripted-model-no-key"

// ScriptPrefix starts the name of every scripted model ("script:echo").
const ScriptPrefix = "script:"

// IsScripted reports whether model names a scripted model.
func IsScripted(model string) bool { return strings.HasPrefix(model, ScriptPrefix) }

// PriceBook maps model IDs to prices. The zero value is empty; use
// NewPriceBook for the catalogue's prices plus configured extras.
type PriceBook struct {
	prices map[string]Price
}

// NewPriceBook returns a book with the catalogue's prices, overlaid by
// extra (local models from configuration, a priced script). Later entries
// win.
func NewPriceBook(extra ...ModelInfo) PriceBook {
	b := PriceBook{prices: make(map[string]Price)}
	for _, m := range Catalogue() {
		b.prices[m.ID] = m.Price
	}
	for _, m := range extra {
		b.prices[m.ID] = m.Price
	}
	return b
}

// Lookup returns the price of model and whether it is known.
func (b PriceBook) Lookup(model string) (Price, bool) {
	p, ok := b.prices[model]
	return p, ok
}

// Price returns the cost of u on model in USD. Unknown models (a local
// model without a configured price, a scripted model without one) cost 0.
func (b PriceBook) Price(model string, u Usage) float64 {
	p, ok := b.prices[model]
	if !ok {
		return 0
	}
	return p.Cost(u)
}

// MergeModels merges a provider's live model IDs with the catalogue models
// of that provider and the configured extras: every catalogue/extra model
// is listed, Available only if live contains it; live models unknown to
// both are appended, Available, unpriced. The order is catalogue first,
// then extras, then the rest of live in its own order.
func MergeModels(id ID, live []string, extra []ModelInfo) []ModelInfo {
	liveSet := make(map[string]bool, len(live))
	for _, l := range live {
		liveSet[l] = true
	}
	seen := make(map[string]bool)
	var out []ModelInfo
	add := func(m ModelInfo) {
		if seen[m.ID] {
			return
		}
		seen[m.ID] = true
		m.Available = liveSet[m.ID]
		out = append(out, m)
	}
	for _, m := range Catalogue() {
		if m.Provider == id {
			add(m)
		}
	}
	for _, m := range extra {
		if m.Provider == id || m.Provider == "" {
			m.Provider = id
			add(m)
		}
	}
	for _, l := range live {
		if !seen[l] {
			seen[l] = true
			out = append(out, ModelInfo{ID: l, Provider: id, Available: true, Scripted: IsScripted(l), Tools: IsScripted(l)})
		}
	}
	return out
}

// CatalogueModel returns the catalogue entry for model.
func CatalogueModel(model string) (ModelInfo, bool) {
	for _, m := range Catalogue() {
		if m.ID == model {
			return m, true
		}
	}
	return ModelInfo{}, false
}

// ProviderOf returns the provider of a catalogue model.
func ProviderOf(model string) (ID, bool) {
	m, ok := CatalogueModel(model)
	return m.Provider, ok
}
