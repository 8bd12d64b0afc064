package anthropic

import (
	"errors"
	"io"
	"net"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/aos-run/aos/internal/provider"
)

// mapError turns an SDK error into a *provider.ProviderError. It keeps
// only the status, the error type, a redacted message and the request id:
// the SDK error itself holds the request and its headers, so it is dropped.
func (a *Adapter) mapError(err error) error {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		pe := &provider.ProviderError{Provider: provider.Anthropic, Status: apiErr.StatusCode,
			Code: string(apiErr.Type()), Message: provider.Redact(apiErr.Message, a.key), RequestID: apiErr.RequestID}
		if apiErr.Response != nil {
			pe.RetryAfter = provider.ParseRetryAfter(apiErr.Response.Header, time.Now())
		}
		if pe.Code == "" {
			pe.Code = "http_" + http3(apiErr.StatusCode)
		}
		switch {
		case apiErr.StatusCode < 400:
			// An "error" event in a 200 stream: retry overloads and server errors.
			pe.Status = 0
			pe.Retryable = pe.Code == "overloaded_error" || pe.Code == "api_error" || pe.Code == "rate_limit_error"
		default:
			pe.Retryable = provider.RetryableStatus(apiErr.StatusCode)
			if apiErr.Response != nil {
				if v, ok := provider.ShouldRetryHeader(apiErr.Response.Header); ok {
					pe.Retryable = v
				}
			}
		}
		return pe
	}
	var netErr net.Error
	if errors.As(err, &netErr) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return &provider.ProviderError{Provider: provider.Anthropic, Code: "connection", Retryable: true,
			Message: provider.Redact(err.Error(), a.key)}
	}
	return &provider.ProviderError{Provider: provider.Anthropic, Code: "stream", Retryable: true,
		Message: provider.Redact(err.Error(), a.key)}
}

func http3(status int) string {
	return string([]byte{byte('0' + status/100%10), byte('0' + status/10%10), byte('0' + status%10)})
}
