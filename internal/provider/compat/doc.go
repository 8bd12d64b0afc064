// Package compat is aos's adapter for OpenAI-compatible Chat Completions
// endpoints, for local models (Ollama, vLLM, llama.cpp's server, LM
// Studio), through the official openai-go SDK with a configured base URL
// and model name.
//
// It streams, parses tool calls (parallel too) and reasoning_content where
// the server sends it. Models are priced at zero unless the configuration
// gives a price. CheckModel tells at mission creation whether a model can
// call tools, from the configuration or, failing that, by a one-token
// probe.
//
// aos names a local model "local:NAME" (provider.LocalPrefix); the adapter
// sends NAME to the endpoint, and accepts either form wherever it is given
// a model.
//
// A transcript entry is one Chat Completions message; the system prompt is
// not part of the transcript and is sent first on every call.
package compat
