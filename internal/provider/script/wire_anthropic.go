package script

import "encoding/json"

// Anthropic Messages streaming: message_start, ping, then per content block
// content_block_start / content_block_delta… / content_block_stop, then
// message_delta (stop_reason, usage) and message_stop. Every event has an
// "event:" line; the SDK skips unnamed events.

func (r *reply) anthropicSignature() string { return r.id("sig_", "signature", 0) }

func (r *reply) anthropicUsage(final bool) map[string]any {
	out := r.usage.Output
	if !final {
		out = 1
	}
	return map[string]any{
		"input_tokens":                r.usage.Input,
		"output_tokens":               out,
		"cache_creation_input_tokens": r.usage.CacheWrite,
		"cache_read_input_tokens":     r.usage.CacheRead,
	}
}

func (r *reply) anthropicStopDetails() any {
	if r.refusal == nil {
		return nil
	}
	return map[string]any{"type": "refusal", "category": nullable(r.refusal.Category), "explanation": nullable(r.refusal.Explanation)}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// anthropicMessage is the whole message, for non-streaming requests.
func (r *reply) anthropicMessage() map[string]any {
	var content []any
	if r.thinking != "" {
		content = append(content, map[string]any{"type": "thinking", "thinking": r.thinking, "signature": r.anthropicSignature()})
	}
	if r.text != "" {
		content = append(content, map[string]any{"type": "text", "text": r.text})
	}
	for _, c := range r.calls {
		in := json.RawMessage(c.input)
		if c.cut {
			in = json.RawMessage(`{}`)
		}
		content = append(content, map[string]any{"type": "tool_use", "id": "toolu_" + c.id, "name": c.name, "input": in})
	}
	if content == nil {
		content = []any{}
	}
	return map[string]any{
		"id": r.id("msg_", "msg", 0), "type": "message", "role": "assistant", "model": r.model,
		"content": content, "stop_reason": r.stopReason(), "stop_sequence": nil,
		"stop_details": r.anthropicStopDetails(), "usage": r.anthropicUsage(true),
	}
}

func writeAnthropic(e *emitter, r *reply) error {
	err := e.send("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": r.id("msg_", "msg", 0), "type": "message", "role": "assistant", "model": r.model,
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": r.anthropicUsage(false),
	}})
	if err != nil {
		return err
	}
	if err := e.send("ping", map[string]any{"type": "ping"}); err != nil {
		return err
	}
	idx := 0
	block := func(start map[string]any, deltas []map[string]any) error {
		if err := e.send("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": start}); err != nil {
			return err
		}
		for _, d := range deltas {
			if err := e.send("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": d}); err != nil {
				return err
			}
		}
		if err := e.send("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx}); err != nil {
			return err
		}
		idx++
		return nil
	}
	if r.thinking != "" {
		var ds []map[string]any
		for _, c := range chunks(r.thinking, 24) {
			ds = append(ds, map[string]any{"type": "thinking_delta", "thinking": c})
		}
		ds = append(ds, map[string]any{"type": "signature_delta", "signature": r.anthropicSignature()})
		if err := block(map[string]any{"type": "thinking", "thinking": "", "signature": ""}, ds); err != nil {
			return err
		}
	}
	if r.text != "" {
		var ds []map[string]any
		for _, c := range chunks(r.text, 24) {
			ds = append(ds, map[string]any{"type": "text_delta", "text": c})
		}
		if err := block(map[string]any{"type": "text", "text": ""}, ds); err != nil {
			return err
		}
	}
	for _, c := range r.calls {
		var ds []map[string]any
		for _, p := range chunks(c.input, 16) {
			ds = append(ds, map[string]any{"type": "input_json_delta", "partial_json": p})
		}
		start := map[string]any{"type": "tool_use", "id": "toolu_" + c.id, "name": c.name, "input": map[string]any{}}
		if err := block(start, ds); err != nil {
			return err
		}
	}
	if err := e.beforeFinal(); err != nil {
		return err
	}
	err = e.send("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": r.stopReason(), "stop_sequence": nil, "stop_details": r.anthropicStopDetails()},
		"usage": r.anthropicUsage(true)})
	if err != nil {
		return err
	}
	return e.send("message_stop", map[string]any{"type": "message_stop"})
}
