package anthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/aos-run/aos/internal/provider"
)

// attemptOption tells the server which retry this is, through the SDK's
// own retry-count header (the SDK's retries are off, so it would send 0).
func attemptOption(n int) option.RequestOption {
	return option.WithHeader(provider.AttemptHeader, strconv.Itoa(n-1))
}

// Params builds the request parameters of req. It is exported for the
// golden request test and the benchmarks.
func (a *Adapter) Params(req provider.Request) sdk.BetaMessageNewParams {
	maxTokens := req.MaxOutputTokens
	if maxTokens <= 0 {
		maxTokens = a.cfg.MaxOutputTokens
	}
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	p := sdk.BetaMessageNewParams{
		Model:     sdk.Model(req.Model),
		MaxTokens: maxTokens,
		// The transcript is spliced in by Body, verbatim.
		Messages: []sdk.BetaMessageParam{param.Override[sdk.BetaMessageParam](json.RawMessage(`"` + provider.RawArraySentinel + `"`))},
		// Adaptive thinking, shown summarized; never budget_tokens.
		Thinking: sdk.BetaThinkingConfigParamUnion{OfAdaptive: &sdk.BetaThinkingConfigAdaptiveParam{
			Display: sdk.BetaThinkingConfigAdaptiveDisplaySummarized,
		}},
		// Automatic caching of the conversation tail.
		CacheControl: sdk.NewBetaCacheControlEphemeralParam(),
	}
	if req.System != "" {
		// The cache breakpoint on the system block caches tools + system.
		p.System = []sdk.BetaTextBlockParam{{Text: req.System, CacheControl: sdk.NewBetaCacheControlEphemeralParam()}}
	}
	if req.Effort != "" {
		p.OutputConfig = sdk.BetaOutputConfigParam{Effort: sdk.BetaOutputConfigEffort(req.Effort)}
	}
	for _, t := range req.Tools {
		tp := &sdk.BetaToolParam{
			Name:                t.Name,
			InputSchema:         param.Override[sdk.BetaToolInputSchemaParam](t.InputSchema),
			Strict:              param.NewOpt(true),
			EagerInputStreaming: param.NewOpt(true),
		}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, sdk.BetaToolUnionParam{OfTool: tp})
	}
	if a.model(req.Model).ServerFallback {
		p.Fallbacks = sdk.BetaFallbacksParamOfDefault()
		p.Betas = []sdk.AnthropicBeta{sdk.AnthropicBetaServerSideFallback2026_07_01}
	}
	return p
}

// Body encodes the request body of req: the typed parameters through the
// SDK, the transcript spliced in as it is (see provider.SpliceBody).
func (a *Adapter) Body(req provider.Request) (sdk.BetaMessageNewParams, []byte, error) {
	p := a.Params(req)
	small, err := p.MarshalJSON()
	if err != nil {
		return p, nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	body, err := provider.SpliceBody(small, req.Transcript)
	if err != nil {
		return p, nil, fmt.Errorf("anthropic: encode request: %w", err)
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
	var resp *provider.Response
	streamed := false
	attempts, err := a.cfg.Retry.Do(ctx, func(ctx context.Context, n int) error {
		if streamed && req.OnDelta != nil {
			req.OnDelta(provider.Delta{Type: provider.DeltaReset})
		}
		acc := newAccumulator(req.OnDelta)
		actx, wd, cancel := provider.StartWatchdog(ctx, a.cfg.IdleTimeout)
		defer cancel()
		// params still go to the SDK for the headers they carry (betas);
		// the body sent is ours.
		opts := append([]option.RequestOption{attemptOption(n), option.WithRequestBody("application/json", body)}, keyOpts...)
		stream := a.client.Beta.Messages.NewStreaming(actx, params, opts...)
		defer stream.Close()
		for stream.Next() {
			wd.Kick()
			ev := stream.Current()
			acc.add(&ev)
			streamed = streamed || acc.emitted
		}
		if err := stream.Err(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if werr := wd.Err(provider.Anthropic); werr != nil {
				return werr
			}
			return a.mapError(err)
		}
		if !acc.done {
			return &provider.ProviderError{Provider: provider.Anthropic, Code: "truncated_stream", Retryable: true,
				Message: "the stream ended before message_stop"}
		}
		r, err := acc.response(req.Model)
		if err != nil {
			return err
		}
		resp = r
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("anthropic call %s: %w", req.Model, err)
	}
	resp.Attempts = attempts
	return resp, nil
}

// keyFor returns the request option that carries the key for model: none
// (the client's key) when a key is set; the placeholder for a scripted
// model without a key; else a *provider.MissingKeyError.
func (a *Adapter) keyFor(model string) ([]option.RequestOption, error) {
	if provider.IsScripted(model) {
		if err := a.scriptedServed(model); err != nil {
			return nil, err
		}
	}
	if a.key != "" {
		return nil, nil
	}
	if provider.IsScripted(model) {
		return []option.RequestOption{option.WithAPIKey(provider.ScriptedKey)}, nil
	}
	return nil, a.checkKey()
}

// stopReason maps Anthropic's stop reason.
func stopReason(s string) provider.StopReason {
	switch s {
	case "end_turn", "stop_sequence":
		return provider.StopEndTurn
	case "tool_use":
		return provider.StopToolUse
	case "max_tokens":
		return provider.StopMaxTokens
	case "refusal":
		return provider.StopRefusal
	case "pause_turn":
		return provider.StopPauseTurn
	case "model_context_window_exceeded":
		return provider.StopContextExceeded
	}
	return provider.StopEndTurn
}

// nativeBlock is an assistant content block as it goes back to the API.
type nativeBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}
