package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/aos-run/aos/internal/provider"
)

// Params builds the request parameters of req, with a sentinel in place
// of the input items (see Body).
func (a *Adapter) Params(req provider.Request) (responses.ResponseNewParams, error) {
	input := responses.ResponseInputParam{param.Override[responses.ResponseInputItemUnionParam](json.RawMessage(`"` + provider.RawArraySentinel + `"`))}
	p := responses.ResponseNewParams{
		Model:             req.Model,
		Input:             responses.ResponseNewParamsInputUnion{OfInputItemList: input},
		Store:             param.NewOpt(false),
		ParallelToolCalls: param.NewOpt(true),
		Include:           []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent},
		Reasoning:         shared.ReasoningParam{Summary: shared.ReasoningSummaryAuto},
	}
	if req.System != "" {
		p.Instructions = param.NewOpt(req.System)
	}
	if req.Effort != "" {
		p.Reasoning.Effort = shared.ReasoningEffort(req.Effort)
	}
	max := req.MaxOutputTokens
	if max <= 0 {
		max = a.cfg.MaxOutputTokens
	}
	if max > 0 {
		p.MaxOutputTokens = param.NewOpt(max)
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema, &schema); err != nil {
			return p, fmt.Errorf("openai: tool %s schema: %w", t.Name, err)
		}
		ft := &responses.FunctionToolParam{Name: t.Name, Parameters: schema, Strict: param.NewOpt(true)}
		if t.Description != "" {
			ft.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: ft})
	}
	return p, nil
}

// Body encodes the request body of req: the typed parameters through the
// SDK, the transcript's input items spliced in as they are.
func (a *Adapter) Body(req provider.Request) (responses.ResponseNewParams, []byte, error) {
	p, err := a.Params(req)
	if err != nil {
		return p, nil, err
	}
	its, err := items(req.Transcript)
	if err != nil {
		return p, nil, fmt.Errorf("openai: read transcript: %w", err)
	}
	small, err := p.MarshalJSON()
	if err != nil {
		return p, nil, fmt.Errorf("openai: encode request: %w", err)
	}
	body, err := provider.SpliceBody(small, its)
	if err != nil {
		return p, nil, fmt.Errorf("openai: encode request: %w", err)
	}
	return p, body, nil
}

// Call implements provider.Adapter.
func (a *Adapter) Call(ctx context.Context, req provider.Request) (*provider.Response, error) {
	keyOpts, err := a.keyFor(req.Model)
	if err != nil {
		return nil, err
	}
	params, body, err := a.Body(req)
	if err != nil {
		return nil, err
	}
	return a.cfg.Retry.Stream(ctx, provider.OpenAI, req.Model, req.OnDelta, func(ctx context.Context, n int, emit func(provider.Delta)) (*provider.Response, error) {
		actx, wd, cancel := provider.StartWatchdog(ctx, a.cfg.IdleTimeout)
		defer cancel()
		opts := append([]option.RequestOption{AttemptOption(n), option.WithRequestBody("application/json", body)}, keyOpts...)
		stream := a.client.Responses.NewStreaming(actx, params, opts...)
		defer stream.Close()
		var final json.RawMessage
		for stream.Next() {
			wd.Kick()
			ev := stream.Current()
			switch ev.Type {
			case "response.output_text.delta":
				emit(provider.Delta{Type: provider.DeltaText, Text: ev.Delta})
			case "response.reasoning_summary_text.delta":
				emit(provider.Delta{Type: provider.DeltaReasoning, Text: ev.Delta})
			case "response.completed", "response.incomplete", "response.failed":
				final = json.RawMessage(ev.RawJSON())
			case "error":
				return nil, &provider.ProviderError{Provider: provider.OpenAI, Code: ev.Code,
					Message: provider.Redact(ev.Message, a.key), Retryable: RetryableCode(ev.Code) || retryableMessage(ev.Code)}
			}
		}
		if err := stream.Err(); err != nil {
			return nil, provider.StreamError(ctx, wd, provider.OpenAI, err, func(err error) error { return MapError(provider.OpenAI, err, a.key) })
		}
		if final == nil {
			return nil, provider.Truncated(provider.OpenAI, "before response.completed")
		}
		return a.response(req.Model, final)
	})
}

// keyFor returns the request option that carries the key for model, as
// provider.Credential decides it.
func (a *Adapter) keyFor(model string) ([]option.RequestOption, error) {
	k, err := a.cred().For(model)
	if err != nil || k == "" {
		return nil, err
	}
	return []option.RequestOption{option.WithAPIKey(k)}, nil
}

// finalEvent is the part of response.completed / incomplete / failed the
// adapter reads. Output items are kept raw, to be replayed verbatim.
type finalEvent struct {
	Response struct {
		Status            string            `json:"status"`
		Model             string            `json:"model"`
		Output            []json.RawMessage `json:"output"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
		Usage struct {
			InputTokens        int64 `json:"input_tokens"`
			OutputTokens       int64 `json:"output_tokens"`
			InputTokensDetails struct {
				CachedTokens     int64 `json:"cached_tokens"`
				CacheWriteTokens int64 `json:"cache_write_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	} `json:"response"`
}

type outputItem struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	CallID  string `json:"call_id"`
	Name    string `json:"name"`
	Args    string `json:"arguments"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
	Content []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

func (a *Adapter) response(model string, raw json.RawMessage) (*provider.Response, error) {
	var ev finalEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, &provider.ProviderError{Provider: provider.OpenAI, Code: "stream", Retryable: true, Message: "decode final response: " + err.Error()}
	}
	fr := &ev.Response
	if fr.Status == "failed" {
		pe := &provider.ProviderError{Provider: provider.OpenAI, Code: "failed"}
		if fr.Error != nil {
			pe.Code, pe.Message, pe.Retryable = fr.Error.Code, provider.Redact(fr.Error.Message, a.key), RetryableCode(fr.Error.Code)
		}
		return nil, pe
	}
	u := fr.Usage
	r := &provider.Response{Model: fr.Model, NativeStop: fr.Status, Usage: provider.Usage{
		InputTokens:      u.InputTokens - u.InputTokensDetails.CachedTokens - u.InputTokensDetails.CacheWriteTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.InputTokensDetails.CachedTokens,
		CacheWriteTokens: u.InputTokensDetails.CacheWriteTokens,
	}}
	if r.Model == "" {
		r.Model = model
	}
	reason := ""
	if fr.IncompleteDetails != nil {
		reason = fr.IncompleteDetails.Reason
		r.NativeStop += ":" + reason
	}
	native := make([]json.RawMessage, 0, len(fr.Output))
	for _, itRaw := range fr.Output {
		var it outputItem
		if err := json.Unmarshal(itRaw, &it); err != nil {
			return nil, &provider.ProviderError{Provider: provider.OpenAI, Code: "stream", Message: "decode output item: " + err.Error()}
		}
		switch it.Type {
		case "reasoning":
			var parts []string
			for _, s := range it.Summary {
				parts = append(parts, s.Text)
			}
			if len(parts) > 0 {
				r.Blocks = append(r.Blocks, provider.Block{Type: provider.BlockThinking, Text: strings.Join(parts, "\n\n")})
			}
		case "message":
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					r.Blocks = append(r.Blocks, provider.Block{Type: provider.BlockText, Text: c.Text})
				case "refusal":
					r.Refusal = &provider.Refusal{Explanation: c.Refusal}
				}
			}
		case "function_call":
			args := it.Args
			if args == "" {
				args = "{}"
			}
			if !json.Valid([]byte(args)) {
				r.Blocks = append(r.Blocks, provider.TruncatedToolUse(it.CallID, it.Name, args))
				continue // never replayed: it has no output and no valid input
			}
			r.Blocks = append(r.Blocks, provider.Block{Type: provider.BlockToolUse, ID: it.CallID, Name: it.Name, Input: json.RawMessage(args)})
		}
		native = append(native, itRaw)
	}
	switch {
	case r.Refusal != nil || reason == "content_filter":
		r.Stop = provider.StopRefusal
		if r.Refusal == nil {
			r.Refusal = &provider.Refusal{Category: reason}
		}
	case reason == "max_output_tokens":
		r.Stop = provider.StopMaxTokens
	case len(r.ToolCalls()) > 0:
		r.Stop = provider.StopToolUse
	default:
		r.Stop = provider.StopEndTurn
	}
	b, err := json.Marshal(native)
	if err != nil {
		return nil, &provider.ProviderError{Provider: provider.OpenAI, Code: "stream", Message: "encode native: " + err.Error()}
	}
	r.Native = b
	return r, nil
}
