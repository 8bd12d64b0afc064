package script

import "encoding/base64"

// OpenAI Responses streaming: response.created, response.in_progress, then
// per output item response.output_item.added, its part / delta / done
// events and response.output_item.done, then response.completed (or
// response.incomplete). Every event carries type and sequence_number.

type respStream struct {
	e   *emitter
	r   *reply
	seq int
}

func (s *respStream) send(typ string, fields map[string]any) error {
	fields["type"] = typ
	fields["sequence_number"] = s.seq
	s.seq++
	return s.e.send(typ, fields)
}

func (r *reply) responsesReasoning() map[string]any {
	return map[string]any{
		"id": r.id("rs_", "reasoning", 0), "type": "reasoning",
		"summary":           []any{map[string]any{"type": "summary_text", "text": r.thinking}},
		"encrypted_content": r.id("enc_", "encrypted", 0) + base64.StdEncoding.EncodeToString([]byte(r.thinking)),
	}
}

func (r *reply) responsesMessage() map[string]any {
	part := map[string]any{"type": "output_text", "text": r.text, "annotations": []any{}, "logprobs": []any{}}
	if r.refusal != nil {
		part = map[string]any{"type": "refusal", "refusal": r.refusalText()}
	}
	return map[string]any{"id": r.id("msg_", "message", 0), "type": "message", "status": "completed",
		"role": "assistant", "content": []any{part}}
}

func (r *reply) refusalText() string {
	if r.refusal == nil {
		return ""
	}
	if r.refusal.Explanation != "" {
		return r.refusal.Explanation
	}
	if r.text != "" {
		return r.text
	}
	return "I can't help with that."
}

func (r *reply) responsesCall(i int) map[string]any {
	c := r.calls[i]
	status := "completed"
	if c.cut {
		status = "incomplete"
	}
	return map[string]any{"id": r.id("fc_", "fc", i), "type": "function_call", "status": status,
		"call_id": "call_" + c.id, "name": c.name, "arguments": c.input}
}

func (r *reply) responsesOutput() []any {
	var out []any
	if r.thinking != "" {
		out = append(out, r.responsesReasoning())
	}
	if r.text != "" || r.refusal != nil {
		out = append(out, r.responsesMessage())
	}
	for i := range r.calls {
		out = append(out, r.responsesCall(i))
	}
	if out == nil {
		out = []any{}
	}
	return out
}

func (r *reply) responsesUsage() map[string]any {
	in := r.usage.Input + r.usage.CacheRead + r.usage.CacheWrite
	return map[string]any{
		"input_tokens":          in,
		"input_tokens_details":  map[string]any{"cached_tokens": r.usage.CacheRead, "cache_write_tokens": r.usage.CacheWrite},
		"output_tokens":         r.usage.Output,
		"output_tokens_details": map[string]any{"reasoning_tokens": int64(len(r.thinking) / 4)},
		"total_tokens":          in + r.usage.Output,
	}
}

// responsesObject is the response object; final adds output, usage and
// the final status.
func (r *reply) responsesObject(final bool) map[string]any {
	o := map[string]any{
		"id": r.id("resp_", "resp", 0), "object": "response", "created_at": 1767225600,
		"status": "in_progress", "model": r.model, "output": []any{}, "parallel_tool_calls": true,
		"tool_choice": "auto", "tools": []any{}, "store": false, "error": nil, "incomplete_details": nil,
		"instructions": nil, "metadata": map[string]any{}, "temperature": 1.0, "top_p": 1.0,
		"text": map[string]any{"format": map[string]any{"type": "text"}}, "usage": nil,
	}
	if final {
		o["output"] = r.responsesOutput()
		o["usage"] = r.responsesUsage()
		o["status"] = "completed"
		if r.maxTokens {
			o["status"] = "incomplete"
			o["incomplete_details"] = map[string]any{"reason": "max_output_tokens"}
		}
	}
	return o
}

func writeResponses(e *emitter, r *reply) error {
	s := &respStream{e: e, r: r}
	if err := s.send("response.created", map[string]any{"response": r.responsesObject(false)}); err != nil {
		return err
	}
	if err := s.send("response.in_progress", map[string]any{"response": r.responsesObject(false)}); err != nil {
		return err
	}
	idx := 0
	if r.thinking != "" {
		item := r.responsesReasoning()
		id := item["id"]
		added := map[string]any{"id": id, "type": "reasoning", "summary": []any{}}
		if err := s.send("response.output_item.added", map[string]any{"output_index": idx, "item": added}); err != nil {
			return err
		}
		base := func() map[string]any { return map[string]any{"item_id": id, "output_index": idx, "summary_index": 0} }
		m := base()
		m["part"] = map[string]any{"type": "summary_text", "text": ""}
		if err := s.send("response.reasoning_summary_part.added", m); err != nil {
			return err
		}
		for _, c := range chunks(r.thinking, 24) {
			m := base()
			m["delta"] = c
			if err := s.send("response.reasoning_summary_text.delta", m); err != nil {
				return err
			}
		}
		m = base()
		m["text"] = r.thinking
		if err := s.send("response.reasoning_summary_text.done", m); err != nil {
			return err
		}
		m = base()
		m["part"] = map[string]any{"type": "summary_text", "text": r.thinking}
		if err := s.send("response.reasoning_summary_part.done", m); err != nil {
			return err
		}
		if err := s.send("response.output_item.done", map[string]any{"output_index": idx, "item": item}); err != nil {
			return err
		}
		idx++
	}
	if r.text != "" || r.refusal != nil {
		item := r.responsesMessage()
		id := item["id"]
		added := map[string]any{"id": id, "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}
		if err := s.send("response.output_item.added", map[string]any{"output_index": idx, "item": added}); err != nil {
			return err
		}
		base := func() map[string]any { return map[string]any{"item_id": id, "output_index": idx, "content_index": 0} }
		part := item["content"].([]any)[0].(map[string]any)
		empty := map[string]any{"type": "output_text", "text": "", "annotations": []any{}, "logprobs": []any{}}
		deltaType, doneType, doneField, full := "response.output_text.delta", "response.output_text.done", "text", r.text
		if r.refusal != nil {
			empty = map[string]any{"type": "refusal", "refusal": ""}
			deltaType, doneType, doneField, full = "response.refusal.delta", "response.refusal.done", "refusal", r.refusalText()
		}
		m := base()
		m["part"] = empty
		if err := s.send("response.content_part.added", m); err != nil {
			return err
		}
		for _, c := range chunks(full, 24) {
			m := base()
			m["delta"] = c
			if r.refusal == nil {
				m["logprobs"] = []any{}
			}
			if err := s.send(deltaType, m); err != nil {
				return err
			}
		}
		m = base()
		m[doneField] = full
		if r.refusal == nil {
			m["logprobs"] = []any{}
		}
		if err := s.send(doneType, m); err != nil {
			return err
		}
		m = base()
		m["part"] = part
		if err := s.send("response.content_part.done", m); err != nil {
			return err
		}
		if err := s.send("response.output_item.done", map[string]any{"output_index": idx, "item": item}); err != nil {
			return err
		}
		idx++
	}
	for i, c := range r.calls {
		item := r.responsesCall(i)
		added := map[string]any{"id": item["id"], "type": "function_call", "status": "in_progress",
			"call_id": item["call_id"], "name": c.name, "arguments": ""}
		if err := s.send("response.output_item.added", map[string]any{"output_index": idx, "item": added}); err != nil {
			return err
		}
		for _, p := range chunks(c.input, 16) {
			if err := s.send("response.function_call_arguments.delta", map[string]any{"item_id": item["id"], "output_index": idx, "delta": p}); err != nil {
				return err
			}
		}
		if !c.cut {
			if err := s.send("response.function_call_arguments.done", map[string]any{"item_id": item["id"], "output_index": idx, "name": c.name, "arguments": c.input}); err != nil {
				return err
			}
		}
		if err := s.send("response.output_item.done", map[string]any{"output_index": idx, "item": item}); err != nil {
			return err
		}
		idx++
	}
	if err := e.beforeFinal(); err != nil {
		return err
	}
	final := r.responsesObject(true)
	if r.maxTokens {
		return s.send("response.incomplete", map[string]any{"response": final})
	}
	return s.send("response.completed", map[string]any{"response": final})
}
