package compat

import (
	"encoding/json"

	"github.com/aos-run/aos/internal/provider"
)

type chatMessage struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function toolFunction `json:"function"`
}

type toolFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ErrorPrefix starts the content of a failed tool result: Chat Completions
// has no error flag on tool messages.
const ErrorPrefix = "[error] "

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("compat: marshal transcript entry: " + err.Error())
	}
	return b
}

func text(role, s string) json.RawMessage { return mustJSON(chatMessage{Role: role, Content: &s}) }

// InitTranscript implements provider.Adapter.
func (a *Adapter) InitTranscript(userText string) provider.Transcript {
	return provider.Transcript{text("user", userText)}
}

// AppendToolResults implements provider.Adapter: one tool message per
// result, appended together.
func (a *Adapter) AppendToolResults(t provider.Transcript, results []provider.ToolResult) provider.Transcript {
	entries := make([][]byte, len(results))
	for i, r := range results {
		c := r.Content
		if r.IsError {
			c = ErrorPrefix + c
		}
		entries[i] = mustJSON(chatMessage{Role: "tool", Content: &c, ToolCallID: r.CallID})
	}
	return provider.Append(t, entries...)
}

// AppendUser implements provider.Adapter.
func (a *Adapter) AppendUser(t provider.Transcript, s string) provider.Transcript {
	return provider.Append(t, text("user", s))
}

// AppendOperatorNote implements provider.Adapter: always a delimited user
// note, since many local chat templates reject a system message that is
// not first.
func (a *Adapter) AppendOperatorNote(t provider.Transcript, _ string, s string) provider.Transcript {
	return provider.Append(t, text("user", provider.OperatorNoteText(s)))
}
