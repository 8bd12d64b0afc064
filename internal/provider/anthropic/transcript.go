package anthropic

import (
	"encoding/json"

	"github.com/aos-run/aos/internal/provider"
)

// Transcript entries are Messages API message objects. They are built with
// encoding/json from these small types so that their bytes are stable.

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type message struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

type toolResultBlock struct {
	Type      string `json:"type"`
	ToolUseID string `json:"tool_use_id"`
	Content   string `json:"content"`
	IsError   bool   `json:"is_error,omitempty"`
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		// Only strings and fixed structs are marshalled here.
		panic("anthropic: marshal transcript entry: " + err.Error())
	}
	return b
}

func userText(text string) json.RawMessage {
	return mustJSON(message{Role: "user", Content: []textBlock{{Type: "text", Text: text}}})
}

// InitTranscript implements provider.Adapter.
func (a *Adapter) InitTranscript(text string) provider.Transcript {
	return provider.Transcript{userText(text)}
}

// AppendToolResults implements provider.Adapter: one user message holding
// every result of the turn, failed ones with is_error.
func (a *Adapter) AppendToolResults(t provider.Transcript, results []provider.ToolResult) provider.Transcript {
	blocks := make([]toolResultBlock, len(results))
	for i, r := range results {
		blocks[i] = toolResultBlock{Type: "tool_result", ToolUseID: r.CallID, Content: r.Content, IsError: r.IsError}
	}
	return provider.Append(t, mustJSON(message{Role: "user", Content: blocks}))
}

// AppendUser implements provider.Adapter.
func (a *Adapter) AppendUser(t provider.Transcript, text string) provider.Transcript {
	return provider.Append(t, userText(text))
}

// AppendOperatorNote implements provider.Adapter: a {"role":"system"}
// message on models that accept one mid-conversation, otherwise a user
// message wrapped in <aos-operator-note> tags.
func (a *Adapter) AppendOperatorNote(t provider.Transcript, model, text string) provider.Transcript {
	if a.model(model).SystemMessages {
		return provider.Append(t, mustJSON(message{Role: "system", Content: []textBlock{{Type: "text", Text: text}}}))
	}
	return provider.Append(t, userText(provider.OperatorNoteText(text)))
}
