package openai

import (
	"encoding/json"

	"github.com/aos-run/aos/internal/provider"
)

type inputText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type messageItem struct {
	Type    string      `json:"type"`
	Role    string      `json:"role"`
	Content []inputText `json:"content"`
}

type functionOutput struct {
	Type   string `json:"type"`
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

// ErrorPrefix starts the output of a failed tool call: Responses has no
// error flag on function_call_output.
const ErrorPrefix = "[error] "

func entry(items ...any) json.RawMessage {
	b, err := json.Marshal(items)
	if err != nil {
		panic("openai: marshal transcript entry: " + err.Error())
	}
	return b
}

func message(role, text string) messageItem {
	return messageItem{Type: "message", Role: role, Content: []inputText{{Type: "input_text", Text: text}}}
}

// InitTranscript implements provider.Adapter.
func (a *Adapter) InitTranscript(userText string) provider.Transcript {
	return provider.Transcript{entry(message("user", userText))}
}

// AppendToolResults implements provider.Adapter: one function_call_output
// per result, in one entry. A failed result's output starts with
// ErrorPrefix.
func (a *Adapter) AppendToolResults(t provider.Transcript, results []provider.ToolResult) provider.Transcript {
	items := make([]any, len(results))
	for i, r := range results {
		out := r.Content
		if r.IsError {
			out = ErrorPrefix + out
		}
		items[i] = functionOutput{Type: "function_call_output", CallID: r.CallID, Output: out}
	}
	return provider.Append(t, entry(items...))
}

// AppendUser implements provider.Adapter.
func (a *Adapter) AppendUser(t provider.Transcript, text string) provider.Transcript {
	return provider.Append(t, entry(message("user", text)))
}

// AppendOperatorNote implements provider.Adapter: Responses accepts
// developer messages anywhere in the input, which is OpenAI's form of a
// mid-conversation system message.
func (a *Adapter) AppendOperatorNote(t provider.Transcript, _ string, text string) provider.Transcript {
	return provider.Append(t, entry(message("developer", text)))
}

// items flattens a transcript into input items.
func items(t provider.Transcript) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(t)*2)
	for _, e := range t {
		if len(e) > 0 && e[0] == '[' {
			var arr []json.RawMessage
			if err := json.Unmarshal(e, &arr); err != nil {
				return nil, err
			}
			out = append(out, arr...)
			continue
		}
		out = append(out, e)
	}
	return out, nil
}
