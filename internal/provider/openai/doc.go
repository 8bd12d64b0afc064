// Package openai is the OpenAI Responses adapter of aos, on the official
// SDK github.com/openai/openai-go/v3.
//
// It is stateless: store is false and previous_response_id is never sent;
// the whole transcript goes with every call. Reasoning summaries are
// requested, and reasoning items come back with encrypted_content
// (include: reasoning.encrypted_content) and are replayed unchanged.
// Function tools are strict and may be called in parallel.
//
// A transcript entry is a JSON array of Responses input items: one entry
// per user message, tool-result batch, operator note or response.
package openai
