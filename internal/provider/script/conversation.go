package script

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Format is one of the wire formats the server speaks.
type Format string

// The wire formats.
const (
	FormatAnthropic Format = "anthropic" // POST /v1/messages
	FormatResponses Format = "responses" // POST /v1/responses
	FormatChat      Format = "chat"      // POST /v1/chat/completions
)

// Conversation is a request reduced to what scripts look at, the same for
// every format.
type Conversation struct {
	Format Format
	Model  string
	Stream bool
	System string
	// Tools are the names of the tools offered.
	Tools    []string
	Messages []Message
	// AssistantTurns counts the assistant turns in the transcript: the
	// index of the turn to answer.
	AssistantTurns int
}

// Message is one message of a Conversation. Role is user, assistant,
// system (a mid-conversation system message) or tool (a batch of results).
type Message struct {
	Role        string
	Text        string
	ToolResults []ToolResultView
	ToolCalls   []string
}

// ToolResultView is a tool result as the model sees it.
type ToolResultView struct {
	CallID  string
	Content string
	IsError bool
}

// FirstUserText returns the text of the first user message.
func (c *Conversation) FirstUserText() string {
	for _, m := range c.Messages {
		if m.Role == "user" && m.Text != "" {
			return m.Text
		}
	}
	return ""
}

// LastUserText returns the text of the last user message that has text.
func (c *Conversation) LastUserText() string {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if m := c.Messages[i]; m.Role == "user" && m.Text != "" {
			return m.Text
		}
	}
	return ""
}

// LastToolResults returns the results of the latest batch of tool results.
func (c *Conversation) LastToolResults() []ToolResultView {
	for i := len(c.Messages) - 1; i >= 0; i-- {
		if rs := c.Messages[i].ToolResults; len(rs) > 0 {
			return rs
		}
	}
	return nil
}

// allText is every text and tool result of the conversation, for
// transcript_contains.
func (c *Conversation) allText() string {
	var b strings.Builder
	for _, m := range c.Messages {
		b.WriteString(m.Text)
		b.WriteByte('\n')
		for _, r := range m.ToolResults {
			b.WriteString(r.Content)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// parseConversation reduces a request body of format f.
func parseConversation(f Format, body []byte) (*Conversation, error) {
	switch f {
	case FormatAnthropic:
		return parseAnthropic(body)
	case FormatResponses:
		return parseResponses(body)
	case FormatChat:
		return parseChat(body)
	}
	return nil, fmt.Errorf("unknown format %q", f)
}

// textOf reads a content that is a string or a list of parts with "text"
// (or "refusal") fields.
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Text != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func parseAnthropic(body []byte) (*Conversation, error) {
	var req struct {
		Model    string          `json:"model"`
		Stream   bool            `json:"stream"`
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("messages request: %w", err)
	}
	c := &Conversation{Format: FormatAnthropic, Model: req.Model, Stream: req.Stream, System: textOf(req.System)}
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, t.Name)
	}
	for _, m := range req.Messages {
		msg := Message{Role: m.Role}
		var blocks []struct {
			Type      string          `json:"type"`
			Text      string          `json:"text"`
			Name      string          `json:"name"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
			IsError   bool            `json:"is_error"`
		}
		if json.Unmarshal(m.Content, &blocks) != nil {
			msg.Text = textOf(m.Content)
		}
		var texts []string
		for _, b := range blocks {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "tool_use":
				msg.ToolCalls = append(msg.ToolCalls, b.Name)
			case "tool_result":
				msg.ToolResults = append(msg.ToolResults, ToolResultView{CallID: b.ToolUseID, Content: textOf(b.Content), IsError: b.IsError})
			}
		}
		if len(texts) > 0 {
			msg.Text = strings.Join(texts, "\n")
		}
		if m.Role == "assistant" {
			c.AssistantTurns++
		}
		c.Messages = append(c.Messages, msg)
	}
	return c, nil
}

func parseResponses(body []byte) (*Conversation, error) {
	var req struct {
		Model        string          `json:"model"`
		Stream       bool            `json:"stream"`
		Instructions string          `json:"instructions"`
		Input        json.RawMessage `json:"input"`
		Tools        []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("responses request: %w", err)
	}
	c := &Conversation{Format: FormatResponses, Model: req.Model, Stream: req.Stream, System: req.Instructions}
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, t.Name)
	}
	var s string
	if json.Unmarshal(req.Input, &s) == nil {
		c.Messages = []Message{{Role: "user", Text: s}}
		return c, nil
	}
	var items []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Name    string          `json:"name"`
		CallID  string          `json:"call_id"`
		Output  json.RawMessage `json:"output"`
	}
	if len(req.Input) > 0 {
		if err := json.Unmarshal(req.Input, &items); err != nil {
			return nil, fmt.Errorf("responses request: input: %w", err)
		}
	}
	inAssistant := false
	for _, it := range items {
		typ := it.Type
		if typ == "" {
			typ = "message"
		}
		// Every item the model produced is the assistant's: tool calls of
		// each kind (custom tools, local shell, hosted web search) count.
		assistantSide := typ == "reasoning" || typ == "function_call" || typ == "custom_tool_call" || typ == "local_shell_call" ||
			typ == "web_search_call" || (typ == "message" && it.Role == "assistant")
		if assistantSide && !inAssistant {
			c.AssistantTurns++
			c.Messages = append(c.Messages, Message{Role: "assistant"})
		}
		inAssistant = assistantSide
		switch {
		case typ == "function_call" || typ == "custom_tool_call":
			last := &c.Messages[len(c.Messages)-1]
			last.ToolCalls = append(last.ToolCalls, it.Name)
		case typ == "local_shell_call":
			last := &c.Messages[len(c.Messages)-1]
			last.ToolCalls = append(last.ToolCalls, "local_shell")
		case typ == "message" && it.Role == "assistant":
			last := &c.Messages[len(c.Messages)-1]
			last.Text += textOf(it.Content)
		case typ == "message":
			role := it.Role
			if role == "developer" {
				role = "system" // a mid-conversation instruction
			}
			c.Messages = append(c.Messages, Message{Role: role, Text: textOf(it.Content)})
		case typ == "function_call_output" || typ == "custom_tool_call_output" || typ == "local_shell_call_output":
			out := textOf(it.Output)
			tr := ToolResultView{CallID: it.CallID, Content: out, IsError: strings.HasPrefix(out, "[error]")}
			if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == "tool" {
				c.Messages[n-1].ToolResults = append(c.Messages[n-1].ToolResults, tr)
			} else {
				c.Messages = append(c.Messages, Message{Role: "tool", ToolResults: []ToolResultView{tr}})
			}
		}
	}
	return c, nil
}

func parseChat(body []byte) (*Conversation, error) {
	var req struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role       string          `json:"role"`
			Content    json.RawMessage `json:"content"`
			ToolCallID string          `json:"tool_call_id"`
			ToolCalls  []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, fmt.Errorf("chat request: %w", err)
	}
	c := &Conversation{Format: FormatChat, Model: req.Model, Stream: req.Stream}
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, t.Function.Name)
	}
	for i, m := range req.Messages {
		text := textOf(m.Content)
		switch m.Role {
		case "system", "developer":
			if i == 0 {
				c.System = text
				continue
			}
			c.Messages = append(c.Messages, Message{Role: "system", Text: text})
		case "assistant":
			c.AssistantTurns++
			msg := Message{Role: "assistant", Text: text}
			for _, tc := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, tc.Function.Name)
			}
			c.Messages = append(c.Messages, msg)
		case "tool":
			tr := ToolResultView{CallID: m.ToolCallID, Content: text, IsError: strings.HasPrefix(text, "[error]")}
			if n := len(c.Messages); n > 0 && c.Messages[n-1].Role == "tool" {
				c.Messages[n-1].ToolResults = append(c.Messages[n-1].ToolResults, tr)
			} else {
				c.Messages = append(c.Messages, Message{Role: "tool", ToolResults: []ToolResultView{tr}})
			}
		default:
			c.Messages = append(c.Messages, Message{Role: m.Role, Text: text})
		}
	}
	return c, nil
}
