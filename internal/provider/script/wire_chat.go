package script

// OpenAI Chat Completions streaming: data-only "chat.completion.chunk"
// events; the first delta carries the role, tool calls are indexed, the
// last choice chunk carries finish_reason, a usage chunk with no choices
// follows (stream_options.include_usage), then "data: [DONE]".

func (r *reply) chatFinish() string {
	switch {
	case r.maxTokens:
		return "length"
	case r.refusal != nil:
		return "stop"
	case len(r.calls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (r *reply) chatUsage() map[string]any {
	in := r.usage.Input + r.usage.CacheRead + r.usage.CacheWrite
	return map[string]any{"prompt_tokens": in, "completion_tokens": r.usage.Output, "total_tokens": in + r.usage.Output,
		"prompt_tokens_details": map[string]any{"cached_tokens": r.usage.CacheRead}}
}

func (r *reply) chatCompletion() map[string]any {
	msg := map[string]any{"role": "assistant", "content": nullable(r.text), "refusal": nil}
	if r.refusal != nil {
		msg["refusal"] = r.refusalText()
	}
	if r.thinking != "" {
		msg["reasoning_content"] = r.thinking
	}
	if len(r.calls) > 0 {
		var tcs []any
		for _, c := range r.calls {
			tcs = append(tcs, map[string]any{"id": "call_" + c.id, "type": "function",
				"function": map[string]any{"name": c.name, "arguments": c.input}})
		}
		msg["tool_calls"] = tcs
	}
	return map[string]any{"id": r.id("chatcmpl-", "chat", 0), "object": "chat.completion", "created": 1767225600,
		"model": r.model, "choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": r.chatFinish(), "logprobs": nil}},
		"usage": r.chatUsage()}
}

func writeChat(e *emitter, r *reply) error {
	id := r.id("chatcmpl-", "chat", 0)
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1767225600, "model": r.model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": nil}}}
	}
	if err := e.send("", chunk(map[string]any{"role": "assistant", "content": ""}, nil)); err != nil {
		return err
	}
	for _, c := range chunks(r.thinking, 24) {
		if err := e.send("", chunk(map[string]any{"reasoning_content": c}, nil)); err != nil {
			return err
		}
	}
	for _, c := range chunks(r.text, 24) {
		if err := e.send("", chunk(map[string]any{"content": c}, nil)); err != nil {
			return err
		}
	}
	if r.refusal != nil {
		if err := e.send("", chunk(map[string]any{"refusal": r.refusalText()}, nil)); err != nil {
			return err
		}
	}
	for i, c := range r.calls {
		head := map[string]any{"index": i, "id": "call_" + c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": ""}}
		if err := e.send("", chunk(map[string]any{"tool_calls": []any{head}}, nil)); err != nil {
			return err
		}
		for _, p := range chunks(c.input, 16) {
			d := map[string]any{"index": i, "function": map[string]any{"arguments": p}}
			if err := e.send("", chunk(map[string]any{"tool_calls": []any{d}}, nil)); err != nil {
				return err
			}
		}
	}
	if err := e.beforeFinal(); err != nil {
		return err
	}
	if err := e.send("", chunk(map[string]any{}, r.chatFinish())); err != nil {
		return err
	}
	usage := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1767225600, "model": r.model,
		"choices": []any{}, "usage": r.chatUsage()}
	if err := e.send("", usage); err != nil {
		return err
	}
	return e.raw("", []byte("[DONE]"))
}
