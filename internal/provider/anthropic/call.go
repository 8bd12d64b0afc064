package anthropic

import (
	"bytes"
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
// SDK, the transcript spliced in as it is (see provider.SpliceBody). The
// parameters returned are those the SDK reads for its headers (the betas),
// not the body: the body sent is ours.
//
// The encoded parameters of the last request are kept: an agent loop sends
// the same model, system prompt and tools on every turn, and encoding them
// through the SDK is reflective and grows with the tools' schemas.
func (a *Adapter) Body(req provider.Request) (sdk.BetaMessageNewParams, []byte, error) {
	enc := a.last.Load()
	if enc == nil || !enc.key.matches(req) {
		p := a.Params(req)
		small, err := p.MarshalJSON()
		if err != nil {
			return p, nil, fmt.Errorf("anthropic: encode request: %w", err)
		}
		enc = &encoded{key: keyOf(req), small: small, headers: sdk.BetaMessageNewParams{Model: p.Model, Betas: p.Betas}}
		a.last.Store(enc)
	}
	body, err := provider.SpliceBody(enc.small, req.Transcript)
	if err != nil {
		return enc.headers, nil, fmt.Errorf("anthropic: encode request: %w", err)
	}
	return enc.headers, body, nil
}

// encoded is a request's parameters encoded, the transcript's sentinel in
// place, with the parameters the SDK reads for its headers.
type encoded struct {
	key     requestKey
	small   []byte
	headers sdk.BetaMessageNewParams
}

// requestKey is what the encoded parameters depend on: a request without
// its transcript. It holds its own copy of the tools.
type requestKey struct {
	model, system string
	effort        provider.Effort
	maxTokens     int64
	tools         []provider.ToolDef
}

func keyOf(req provider.Request) requestKey {
	tools := make([]provider.ToolDef, len(req.Tools))
	for i, t := range req.Tools {
		tools[i] = provider.ToolDef{Name: t.Name, Description: t.Description, InputSchema: bytes.Clone(t.InputSchema)}
	}
	return requestKey{model: req.Model, system: req.System, effort: req.Effort, maxTokens: req.MaxOutputTokens, tools: tools}
}

// matches reports whether req encodes as the request of k did.
func (k requestKey) matches(req provider.Request) bool {
	if k.model != req.Model || k.system != req.System || k.effort != req.Effort || k.maxTokens != req.MaxOutputTokens || len(k.tools) != len(req.Tools) {
		return false
	}
	for i, t := range req.Tools {
		if k.tools[i].Name != t.Name || k.tools[i].Description != t.Description || !bytes.Equal(k.tools[i].InputSchema, t.InputSchema) {
			return false
		}
	}
	return true
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
	return a.cfg.Retry.Stream(ctx, provider.Anthropic, req.Model, req.OnDelta, func(ctx context.Context, n int, emit func(provider.Delta)) (*provider.Response, error) {
		acc := newAccumulator(emit)
		actx, wd, cancel := provider.StartWatchdog(ctx, a.cfg.IdleTimeout)
		defer cancel()
		// params go to the SDK for the headers they carry (betas); the
		// body sent is ours.
		opts := append([]option.RequestOption{attemptOption(n), option.WithRequestBody("application/json", body)}, keyOpts...)
		stream := a.client.Beta.Messages.NewStreaming(actx, params, opts...)
		defer stream.Close()
		for stream.Next() {
			wd.Kick()
			ev := stream.Current()
			acc.add(&ev)
		}
		if err := stream.Err(); err != nil {
			return nil, provider.StreamError(ctx, wd, provider.Anthropic, err, a.mapError)
		}
		if !acc.done {
			return nil, provider.Truncated(provider.Anthropic, "before message_stop")
		}
		return acc.response(req.Model)
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
