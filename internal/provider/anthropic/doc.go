// Package anthropic is the Anthropic Messages adapter of aos, on the
// official SDK github.com/anthropics/anthropic-sdk-go/v2 (the module proxy
// serves the SDK only under its /v2 path).
//
// It uses the beta Messages endpoint, streamed, so that the server-side
// fallback beta can be enabled on models that support it. Thinking is
// adaptive with summarized display; effort goes through output_config;
// tools are strict with eager input streaming; prompt caching puts a
// breakpoint on the system prefix and caches the tail automatically.
//
// The transcript is a list of Messages API message objects
// ({"role":…,"content":[…]}) sent as they are, so thinking blocks and their
// signatures go back verbatim.
package anthropic
