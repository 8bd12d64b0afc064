package provider

import (
	"context"
	"encoding/json"
)

// ID names a model provider.
type ID string

// The providers aos knows.
const (
	Anthropic ID = "anthropic" // Anthropic Messages API
	OpenAI    ID = "openai"    // OpenAI Responses API
	Compat    ID = "compat"    // any OpenAI-compatible Chat Completions endpoint
)

// Effort is how hard the model should think. Adapters map it to the
// provider's own setting (Anthropic output_config.effort, OpenAI
// reasoning.effort). The zero value leaves the provider's default.
type Effort string

// The effort levels, from cheapest to most thorough.
const (
	EffortLow    Effort = "low"
	EffortMedium Effort = "medium"
	EffortHigh   Effort = "high"
	EffortXHigh  Effort = "xhigh"
	EffortMax    Effort = "max"
)

// Valid reports whether e is empty (the provider's default) or one of the
// known levels.
func (e Effort) Valid() bool {
	switch e {
	case "", EffortLow, EffortMedium, EffortHigh, EffortXHigh, EffortMax:
		return true
	}
	return false
}

// Transcript is a provider-native conversation: an append-only list of JSON
// entries whose shape only the adapter that built it knows. Entries are
// never edited after they are appended.
type Transcript = []json.RawMessage

// ToolDef describes a tool the model may call. InputSchema is a JSON Schema
// object compatible with strict tool use (every property required,
// additionalProperties false).
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ToolResult is the outcome of one tool call, sent back to the model.
// IsError marks a failed call; the model reads Content either way.
type ToolResult struct {
	CallID  string `json:"callId"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"isError,omitempty"`
}

// BlockType is the kind of a response Block.
type BlockType string

// The block types an adapter returns.
const (
	BlockText     BlockType = "text"
	BlockThinking BlockType = "thinking" // a reasoning summary, shown to the owner, never executed
	BlockToolUse  BlockType = "tool_use"
)

// Block is one piece of a model response, in the order the model produced it.
type Block struct {
	Type BlockType `json:"type"`
	// Text is the text of a text block, or the summary of a thinking block.
	Text string `json:"text,omitempty"`
	// ID, Name and Input describe a tool_use block.
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name,omitempty"`
	Input json.RawMessage `json:"input,omitempty"`
	// Truncated marks a tool_use block whose input was cut off by the output
	// token limit. Its Input is the partial text as a JSON string (so that
	// the response still encodes); it must not be executed, and it is left
	// out of the native transcript entry.
	Truncated bool `json:"truncated,omitempty"`
}

// TruncatedToolUse returns the block for a tool call whose input was cut
// off: Input holds the partial text as a JSON string.
func TruncatedToolUse(id, name, partial string) Block {
	s, _ := json.Marshal(partial) // a string always encodes
	return Block{Type: BlockToolUse, ID: id, Name: name, Input: s, Truncated: true}
}

// StopReason says why the model stopped, in aos's vocabulary.
type StopReason string

// The stop reasons. NativeStop in Response keeps the provider's own word.
const (
	StopEndTurn   StopReason = "end_turn"   // the model finished its turn
	StopToolUse   StopReason = "tool_use"   // the model wants tool results
	StopMaxTokens StopReason = "max_tokens" // the output limit cut the turn short
	StopRefusal   StopReason = "refusal"    // the model declined; see Response.Refusal
	StopPauseTurn StopReason = "pause_turn" // the provider paused a long turn; call again to resume
	// StopContextExceeded means the conversation no longer fits the
	// model's context window.
	StopContextExceeded StopReason = "context_exceeded"
)

// Refusal details a refusal. Category is the provider's classification
// when it gives one (Anthropic stop_details.category), else "".
type Refusal struct {
	Category    string `json:"category,omitempty"`
	Explanation string `json:"explanation,omitempty"`
}

// Usage counts tokens of one call. InputTokens excludes cached tokens:
// CacheReadTokens were read from the prompt cache and CacheWriteTokens were
// written to it, so the four fields never overlap and each is priced once.
type Usage struct {
	InputTokens      int64 `json:"inputTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	CacheReadTokens  int64 `json:"cacheReadTokens"`
	CacheWriteTokens int64 `json:"cacheWriteTokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// DeltaType is the kind of a streamed Delta.
type DeltaType string

// The delta types.
const (
	DeltaText      DeltaType = "text"
	DeltaReasoning DeltaType = "reasoning"
	// DeltaReset says that everything streamed so far is void because the
	// call is being retried; the deltas of the new attempt follow.
	DeltaReset DeltaType = "reset"
)

// Delta is a piece of streamed output, for display only.
type Delta struct {
	Type DeltaType `json:"type"`
	Text string    `json:"text,omitempty"`
}

// Request is one model call.
type Request struct {
	Model  string
	Effort Effort
	System string
	Tools  []ToolDef
	// Transcript is the conversation so far, built by the same adapter.
	Transcript Transcript
	// MaxOutputTokens caps the response; 0 means the adapter's default.
	MaxOutputTokens int64
	// OnDelta, if set, receives streamed text and reasoning as it arrives.
	// It is called from the goroutine that called Call.
	OnDelta func(Delta)
}

// Response is the result of a call. It is the model_call step result, so
// it must stay JSON-serialisable and stable.
type Response struct {
	Blocks []Block    `json:"blocks"`
	Stop   StopReason `json:"stop"`
	Usage  Usage      `json:"usage"`
	Model  string     `json:"model"`
	// Native is the transcript entry to append for this response, verbatim.
	Native     json.RawMessage `json:"native"`
	Refusal    *Refusal        `json:"refusal,omitempty"`
	NativeStop string          `json:"nativeStop"`
	// Attempts counts HTTP attempts, retries included.
	Attempts int `json:"attempts"`
}

// ToolCalls returns the tool_use blocks of r that can be executed (not
// truncated), in order.
func (r *Response) ToolCalls() []Block {
	var calls []Block
	for _, b := range r.Blocks {
		if b.Type == BlockToolUse && !b.Truncated {
			calls = append(calls, b)
		}
	}
	return calls
}

// Adapter is a model provider. Transcript methods are pure: they return a
// new transcript that extends t and never modify t's entries. Call and
// ListModels may be used concurrently.
type Adapter interface {
	// ID names the provider.
	ID() ID
	// InitTranscript starts a transcript from the first user message.
	InitTranscript(userText string) Transcript
	// AppendToolResults appends the results of one turn's tool calls, all
	// of them, in one batch; failed calls carry IsError.
	AppendToolResults(t Transcript, results []ToolResult) Transcript
	// AppendUser appends a later user (steering) message.
	AppendUser(t Transcript, text string) Transcript
	// AppendOperatorNote appends a note from aos itself: a mid-conversation
	// system message where the model supports it, otherwise a clearly
	// delimited user note.
	AppendOperatorNote(t Transcript, model, text string) Transcript
	// Call streams one response, retrying transient failures, and returns
	// it. Errors are *ProviderError, *MissingKeyError or the context's error.
	Call(ctx context.Context, req Request) (*Response, error)
	// ListModels merges the provider's live model list with the catalogue.
	// Catalogue models missing from the live list are Available:false.
	ListModels(ctx context.Context) ([]ModelInfo, error)
	// Price returns the cost of usage on model in USD; 0 for an unpriced model.
	Price(model string, u Usage) float64
}

// ModelChecker is implemented by adapters that can tell, before a mission
// starts, whether a model can be used for an agent (for example whether a
// local model can call tools).
type ModelChecker interface {
	// CheckModel returns nil if model can run an agent loop with tools,
	// else an error that says why (ErrToolsUnsupported, ErrUnknownModel).
	CheckModel(ctx context.Context, model string) error
}
