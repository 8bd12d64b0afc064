package script_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

// TestAnthropicSDKCountTokensAndModel drives the routes Claude Code calls
// besides /v1/messages through the official SDK: count_tokens, one model,
// and a model that does not exist (a typed 404 the SDK can read).
func TestAnthropicSDKCountTokensAndModel(t *testing.T) {
	t.Parallel()
	srv := scripttest.Start(t, "name: sdk\nturns: [{text: ok}]\n")
	c := anthropic.NewClient(option.WithBaseURL(srv.URL()), option.WithAPIKey("test-key-not-secret"), option.WithMaxRetries(0))
	ctx := context.Background()
	n, err := c.Messages.CountTokens(ctx, anthropic.MessageCountTokensParams{Model: "script:sdk",
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hello"))}})
	if err != nil || n.InputTokens < 1 {
		t.Fatalf("CountTokens = %+v, %v", n, err)
	}
	m, err := c.Models.Get(ctx, "script:sdk", anthropic.ModelGetParams{})
	if err != nil || m.ID != "script:sdk" {
		t.Fatalf("Models.Get = %+v, %v", m, err)
	}
	_, err = c.Models.Get(ctx, "script:nope", anthropic.ModelGetParams{})
	var ae *anthropic.Error
	if !errors.As(err, &ae) || ae.StatusCode != http.StatusNotFound || ae.Type() != "not_found_error" {
		t.Fatalf("unknown model: %v", err)
	}
}
