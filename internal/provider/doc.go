// Package provider defines how aos talks to language models: the Adapter
// interface every model provider implements, the provider-neutral types the
// engine consumes (Block, Usage, Response, StopReason), the model catalogue
// and its prices, the retry policy shared by every adapter, and the typed
// errors (ProviderError, MissingKeyError).
//
// The adapters live in sub-packages: anthropic (Messages), openai
// (Responses), compat (OpenAI-compatible Chat Completions for local models).
// Package script is the scripted model server, aos's only fake of a model.
// Package registry builds an adapter from a provider ID.
//
// A transcript is provider-native, opaque and append-only: a slice of JSON
// entries owned by the adapter that produced it. The engine stores it as JSON
// in step results and rebuilds it byte-identically on replay, so an adapter
// never rewrites an entry it has returned before.
//
// This package imports nothing of aos above it; it must not import the
// kernel, the engine or any front end.
package provider
