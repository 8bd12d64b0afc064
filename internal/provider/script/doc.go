// Package script is aos's scripted model server: a loopback HTTP server
// that speaks the Anthropic Messages, OpenAI Responses and OpenAI Chat
// Completions wire formats, streaming as the real APIs do, so that the
// official SDKs parse it unchanged. It is the one fake of a model that aos
// allows; everything around it (SDK, HTTP, kernel) stays real.
//
// The server is stateless: a response is a pure function of the request.
// The script is chosen by the model name ("script:<name>"), else by a tag
// "[script:<name>]" in the first user message, else the default script.
// The turn is the number of assistant turns already in the request's
// transcript, so a retried or replayed call gets the same answer.
//
// The one piece of state is the attempt count of scripted HTTP errors that
// apply to the first K attempts only: it comes from the SDK's retry header
// (X-Stainless-Retry-Count) when the request carries it, else from a
// counter keyed by the SHA-256 of the request body (see Server).
//
// The script format is documented in docs/PROVIDERS.md. This package
// imports only package provider of aos.
package script
