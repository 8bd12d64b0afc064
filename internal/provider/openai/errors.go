package openai

import (
	"errors"
	"io"
	"net"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/aos-run/aos/internal/provider"
)

// MapError turns an openai-go error into a *provider.ProviderError with a
// redacted message; the SDK error (which holds the request) is dropped.
// It is shared with the compat adapter.
func MapError(id provider.ID, err error, key string) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		code := apiErr.Code
		if code == "" {
			code = apiErr.Type
		}
		if code == "" {
			code = "http_error"
		}
		pe := &provider.ProviderError{Provider: id, Status: apiErr.StatusCode, Code: code,
			Message: provider.Redact(apiErr.Message, key), Retryable: provider.RetryableStatus(apiErr.StatusCode)}
		if apiErr.Response != nil {
			pe.RetryAfter = provider.ParseRetryAfter(apiErr.Response.Header, time.Now())
			pe.RequestID = apiErr.Response.Header.Get("X-Request-Id")
			if v, ok := provider.ShouldRetryHeader(apiErr.Response.Header); ok {
				pe.Retryable = v
			}
		}
		return pe
	}
	var se *ssestream.StreamError
	if errors.As(err, &se) {
		msg := provider.Redact(se.Message, key)
		return &provider.ProviderError{Provider: id, Code: "stream_error", Message: msg, Retryable: retryableMessage(msg)}
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &provider.ProviderError{Provider: id, Code: "connection", Retryable: true, Message: provider.Redact(err.Error(), key)}
	}
	return &provider.ProviderError{Provider: id, Code: "stream", Retryable: true, Message: provider.Redact(err.Error(), key)}
}

// retryableMessage guesses from an in-stream error whether a retry helps.
func retryableMessage(msg string) bool {
	for _, s := range []string{"overloaded", "server_error", "rate_limit", "api_error", "timeout", "unavailable"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// RetryableCode says whether a response.failed error code is transient.
func RetryableCode(code string) bool {
	switch code {
	case "server_error", "rate_limit_exceeded", "vector_store_timeout":
		return true
	}
	return false
}
