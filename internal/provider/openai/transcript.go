package openai

import (
	"bytes"
	"encoding/json"
	"fmt"

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

// items flattens a transcript into input items without decoding it: an
// entry that is a JSON array contributes its inside (the text between its
// brackets, a comma-separated run of items), an object contributes
// itself. Joined by commas, the runs form one flat array.
func items(t provider.Transcript) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(t))
	for i, e := range t {
		e = bytes.TrimSpace(e)
		switch {
		case len(e) >= 2 && e[0] == '[' && e[len(e)-1] == ']':
			if inner := bytes.TrimSpace(e[1 : len(e)-1]); len(inner) > 0 {
				out = append(out, inner)
			}
		case len(e) >= 2 && e[0] == '{' && e[len(e)-1] == '}':
			out = append(out, e)
		default:
			return nil, fmt.Errorf("transcript entry %d is neither an item nor an array of items", i)
		}
	}
	return out, nil
}
