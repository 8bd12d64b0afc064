package compat

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/openai"
)

// Params builds the request parameters of req, with a sentinel in place
// of the messages (see Body).
func (a *Adapter) Params(req provider.Request) (sdk.ChatCompletionNewParams, error) {
	msgs := []sdk.ChatCompletionMessageParamUnion{param.Override[sdk.ChatCompletionMessageParamUnion](json.RawMessage(`"` + provider.RawArraySentinel + `"`))}
	p := sdk.ChatCompletionNewParams{
		Model:         provider.LocalName(req.Model), // the endpoint's name for it
		Messages:      msgs,
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)},
	}
	max := req.MaxOutputTokens
	if max <= 0 {
		max = a.cfg.MaxOutputTokens
	}
	if max > 0 {
		p.MaxTokens = param.NewOpt(max)
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return p, fmt.Errorf("compat: tool %s schema: %w", t.Name, err)
		}
		fd := sdk.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			fd.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ChatCompletionToolUnionParam{OfFunction: &sdk.ChatCompletionFunctionToolParam{Function: fd}})
	}
	if len(p.Tools) > 0 {
		p.ParallelToolCalls = param.NewOpt(true)
	}
	return p, nil
}

// Body encodes the request body of req: the system message, then the
// transcript's messages spliced in as they are.
func (a *Adapter) Body(req provider.Request) (sdk.ChatCompletionNewParams, []byte, error) {
	p, err := a.Params(req)
	if err != nil {
		return p, nil, err
	}
	small, err := p.MarshalJSON()
	if err != nil {
		return p, nil, fmt.Errorf("compat: encode request: %w", err)
	}
	msgs := req.Transcript
	if req.System != "" {
		msgs = make([]json.RawMessage, 0, len(req.Transcript)+1)
		msgs = append(msgs, text("system", req.System))
		msgs = append(msgs, req.Transcript...)
	}
	body, err := provider.SpliceBody(small, msgs)
	if err != nil {
		return p, nil, fmt.Errorf("compat: encode request: %w", err)
	}
	return p, body, nil
}

type callAcc struct {
	id, name string
	args     strings.Builder
}

// Call implements provider.Adapter.
func (a *Adapter) Call(ctx context.Context, req provider.Request) (*provider.Response, error) {
	params, body, err := a.Body(req)
	if err != nil {
		return nil, err
	}
	return a.cfg.Retry.Stream(ctx, provider.Compat, req.Model, req.OnDelta, func(ctx context.Context, n int, emit func(provider.Delta)) (*provider.Response, error) {
		actx, wd, cancel := provider.StartWatchdog(ctx, a.cfg.IdleTimeout)
		defer cancel()
		stream := a.client.Chat.Completions.NewStreaming(actx, params, openai.AttemptOption(n), option.WithRequestBody("application/json", body))
		defer stream.Close()
		var (
			text, thinking, refusal strings.Builder
			calls                   []*callAcc
			finish, model           string
			usage                   provider.Usage
		)
		for stream.Next() {
			wd.Kick()
			ch := stream.Current()
			if ch.Model != "" {
				model = ch.Model
			}
			if ch.JSON.Usage.Valid() {
				u := ch.Usage
				cached := u.PromptTokensDetails.CachedTokens
				usage = provider.Usage{InputTokens: u.PromptTokens - cached, OutputTokens: u.CompletionTokens, CacheReadTokens: cached}
			}
			for _, c := range ch.Choices {
				d := &c.Delta
				if d.Content != "" {
					text.WriteString(d.Content)
					emit(provider.Delta{Type: provider.DeltaText, Text: d.Content})
				}
				// vLLM and llama.cpp send reasoning_content; Ollama sends reasoning.
				for _, k := range [...]string{"reasoning_content", "reasoning"} {
					if f, ok := d.JSON.ExtraFields[k]; ok {
						var s string
						if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
							thinking.WriteString(s)
							emit(provider.Delta{Type: provider.DeltaReasoning, Text: s})
						}
					}
				}
				refusal.WriteString(d.Refusal)
				for _, tc := range d.ToolCalls {
					for int(tc.Index) >= len(calls) {
						calls = append(calls, &callAcc{})
					}
					ca := calls[tc.Index]
					if tc.ID != "" {
						ca.id = tc.ID
					}
					if tc.Function.Name != "" {
						ca.name = tc.Function.Name
					}
					ca.args.WriteString(tc.Function.Arguments)
				}
				if c.FinishReason != "" {
					finish = c.FinishReason
				}
			}
		}
		if err := stream.Err(); err != nil {
			return nil, provider.StreamError(ctx, wd, provider.Compat, err, func(err error) error { return openai.MapError(provider.Compat, err, a.key) })
		}
		if finish == "" {
			return nil, provider.Truncated(provider.Compat, "without a finish_reason")
		}
		if model == "" {
			model = req.Model
		}
		return build(model, finish, text.String(), thinking.String(), refusal.String(), calls, usage), nil
	})
}

func build(model, finish, text, thinking, refusal string, calls []*callAcc, usage provider.Usage) *provider.Response {
	r := &provider.Response{Model: model, NativeStop: finish, Usage: usage}
	if thinking != "" {
		r.Blocks = append(r.Blocks, provider.Block{Type: provider.BlockThinking, Text: thinking})
	}
	if text != "" {
		r.Blocks = append(r.Blocks, provider.Block{Type: provider.BlockText, Text: text})
	}
	native := chatMessage{Role: "assistant"}
	if text != "" {
		native.Content = &text
	}
	for _, c := range calls {
		args := c.args.String()
		if args == "" {
			args = "{}"
		}
		if !json.Valid([]byte(args)) {
			r.Blocks = append(r.Blocks, provider.TruncatedToolUse(c.id, c.name, args))
			continue
		}
		r.Blocks = append(r.Blocks, provider.Block{Type: provider.BlockToolUse, ID: c.id, Name: c.name, Input: json.RawMessage(args)})
		native.ToolCalls = append(native.ToolCalls, toolCall{ID: c.id, Type: "function", Function: toolFunction{Name: c.name, Arguments: args}})
	}
	switch {
	case refusal != "" || finish == "content_filter":
		r.Stop = provider.StopRefusal
		r.Refusal = &provider.Refusal{Explanation: refusal}
	case finish == "length":
		r.Stop = provider.StopMaxTokens
	case len(r.ToolCalls()) > 0:
		r.Stop = provider.StopToolUse
	default:
		r.Stop = provider.StopEndTurn
	}
	if native.Content == nil && len(native.ToolCalls) == 0 {
		s := "(no content)"
		if r.Stop == provider.StopMaxTokens {
			s = "[output truncated at max_tokens]"
		}
		native.Content = &s
	}
	r.Native = mustJSON(native)
	return r
}
