package anthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/aos-run/aos/internal/provider"
)

// accumulator rebuilds a message from stream events, keeping what the API
// needs back verbatim (thinking text and signature, redacted data, unknown
// blocks as received).
type accumulator struct {
	onDelta func(provider.Delta) // provider.RetryPolicy.Stream's emit
	done    bool
	model   string
	blocks  []*blockAcc
	stop    string
	refusal *provider.Refusal
	usage   provider.Usage
}

type blockAcc struct {
	typ       string
	text      strings.Builder // text, thinking or partial tool input
	signature string
	data      string
	id, name  string
	raw       json.RawMessage // unknown block types, as started
}

func newAccumulator(onDelta func(provider.Delta)) *accumulator {
	return &accumulator{onDelta: onDelta}
}

func (a *accumulator) delta(t provider.DeltaType, s string) {
	a.onDelta(provider.Delta{Type: t, Text: s})
}

func (a *accumulator) block(i int64) *blockAcc {
	for int(i) >= len(a.blocks) {
		a.blocks = append(a.blocks, &blockAcc{})
	}
	return a.blocks[i]
}

func (a *accumulator) add(ev *sdk.BetaRawMessageStreamEventUnion) {
	switch ev.Type {
	case "message_start":
		m := &ev.Message
		a.model = m.Model
		a.usage = provider.Usage{InputTokens: m.Usage.InputTokens, OutputTokens: m.Usage.OutputTokens,
			CacheReadTokens: m.Usage.CacheReadInputTokens, CacheWriteTokens: m.Usage.CacheCreationInputTokens}
	case "content_block_start":
		b := a.block(ev.Index)
		cb := &ev.ContentBlock
		b.typ = cb.Type
		switch cb.Type {
		case "text":
			b.text.WriteString(cb.Text)
		case "thinking":
			b.text.WriteString(cb.Thinking)
			b.signature = cb.Signature
		case "redacted_thinking":
			b.data = cb.Data
		case "tool_use":
			b.id, b.name = cb.ID, cb.Name
		default:
			b.raw = json.RawMessage(cb.RawJSON())
		}
	case "content_block_delta":
		b := a.block(ev.Index)
		d := &ev.Delta
		switch d.Type {
		case "text_delta":
			b.text.WriteString(d.Text)
			a.delta(provider.DeltaText, d.Text)
		case "thinking_delta":
			b.text.WriteString(d.Thinking)
			a.delta(provider.DeltaReasoning, d.Thinking)
		case "signature_delta":
			b.signature += d.Signature
		case "input_json_delta":
			b.text.WriteString(d.PartialJSON)
		}
	case "message_delta":
		a.stop = string(ev.Delta.StopReason)
		if sd := ev.Delta.StopDetails; sd.JSON.Category.Valid() || sd.JSON.Explanation.Valid() {
			a.refusal = &provider.Refusal{Category: string(sd.Category), Explanation: sd.Explanation}
		}
		u := &ev.Usage
		a.usage.OutputTokens = u.OutputTokens
		if u.JSON.InputTokens.Valid() {
			a.usage.InputTokens = u.InputTokens
		}
		if u.JSON.CacheReadInputTokens.Valid() {
			a.usage.CacheReadTokens = u.CacheReadInputTokens
		}
		if u.JSON.CacheCreationInputTokens.Valid() {
			a.usage.CacheWriteTokens = u.CacheCreationInputTokens
		}
	case "message_stop":
		a.done = true
	}
}

// truncatedNote replaces an assistant message whose only block was a
// truncated tool call, since the API rejects an empty assistant message.
const truncatedNote = "[output truncated at max_tokens]"

func (a *accumulator) response(reqModel string) (*provider.Response, error) {
	r := &provider.Response{Model: a.model, NativeStop: a.stop, Stop: stopReason(a.stop), Usage: a.usage, Refusal: a.refusal}
	if r.Model == "" {
		r.Model = reqModel
	}
	if r.Stop == provider.StopRefusal && r.Refusal == nil {
		r.Refusal = &provider.Refusal{}
	}
	native := make([]any, 0, len(a.blocks))
	for _, b := range a.blocks {
		switch b.typ {
		case "text":
			s := b.text.String()
			if s == "" {
				continue // the API rejects empty text blocks
			}
			r.Blocks = append(r.Blocks, provider.Block{Type: provider.BlockText, Text: s})
			native = append(native, nativeBlock{Type: "text", Text: &s})
		case "thinking":
			s, sig := b.text.String(), b.signature
			r.Blocks = append(r.Blocks, provider.Block{Type: provider.BlockThinking, Text: s})
			if sig == "" {
				// Cut off before its signature (max_tokens mid-thought): shown,
				// but not sent back, since the API would reject it unsigned.
				continue
			}
			native = append(native, nativeBlock{Type: "thinking", Thinking: &s, Signature: &sig})
		case "redacted_thinking":
			native = append(native, nativeBlock{Type: "redacted_thinking", Data: b.data})
		case "tool_use":
			in := b.text.String()
			if in == "" {
				in = "{}"
			}
			if !json.Valid([]byte(in)) {
				// Cut off by max_tokens: reported, never executed, and left
				// out of the transcript (it has no valid input to replay).
				r.Blocks = append(r.Blocks, provider.TruncatedToolUse(b.id, b.name, in))
				continue
			}
			r.Blocks = append(r.Blocks, provider.Block{Type: provider.BlockToolUse, ID: b.id, Name: b.name, Input: json.RawMessage(in)})
			native = append(native, nativeBlock{Type: "tool_use", ID: b.id, Name: b.name, Input: json.RawMessage(in)})
		case "":
			// An index the stream never started: nothing to keep.
		default:
			if len(b.raw) > 0 {
				native = append(native, b.raw)
			}
		}
	}
	if len(native) == 0 {
		s := truncatedNote
		if r.Stop != provider.StopMaxTokens {
			s = "(no content)"
		}
		native = append(native, nativeBlock{Type: "text", Text: &s})
	}
	if r.Stop == provider.StopToolUse && len(r.ToolCalls()) == 0 {
		// A tool_use stop whose only call was unusable cannot be executed.
		r.Stop = provider.StopMaxTokens
	}
	b, err := json.Marshal(message{Role: "assistant", Content: native})
	if err != nil {
		return nil, &provider.ProviderError{Provider: provider.Anthropic, Code: "stream", Message: "encode native message: " + err.Error()}
	}
	r.Native = b
	return r, nil
}
