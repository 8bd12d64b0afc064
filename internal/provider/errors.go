package provider

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ProviderError is a failed model call after the adapter's own retries.
// Retryable says whether a later attempt may succeed (rate limit, overload,
// server error, dropped connection); the engine then retries after durable
// sleeps. It never holds an API key, a request dump or the SDK's error value
// (which carries the request and its headers).
type ProviderError struct {
	Provider ID
	// Status is the HTTP status, or 0 when there was no response.
	Status int
	// Code is a stable machine-readable cause: the provider's error type
	// (rate_limit_error, overloaded_error, invalid_request_error, …) or one
	// of aos's own: "connection", "stream", "truncated_stream".
	Code      string
	Retryable bool
	// Message is the provider's explanation, with secrets redacted.
	Message string
	// RequestID is the provider's request id, when it sent one.
	RequestID string
	// RetryAfter is what the provider asked us to wait, or 0.
	RetryAfter time.Duration
	// Attempts counts the HTTP attempts made before giving up.
	Attempts int
}

// Error implements error.
func (e *ProviderError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "provider %s: ", e.Provider)
	if e.Status != 0 {
		fmt.Fprintf(&b, "status %d ", e.Status)
	}
	b.WriteString(e.Code)
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Is matches another *ProviderError with the same Code (and the same Status
// when the target sets one), so errors.Is(err, &ProviderError{Code: "x"})
// works.
func (e *ProviderError) Is(target error) bool {
	t, ok := target.(*ProviderError)
	if !ok {
		return false
	}
	return (t.Code == "" || t.Code == e.Code) && (t.Status == 0 || t.Status == e.Status)
}

// MissingKeyError says a provider's API key is not set. It names the
// environment variable, never a value.
type MissingKeyError struct {
	Provider ID
	EnvVar   string
}

// Error implements error.
func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("provider %s: API key missing: set %s in the environment", e.Provider, e.EnvVar)
}

// ScriptedModelError says a scripted model ("script:NAME") was asked of a
// provider's real API: only aos's scripted model server (`aos dev
// model-server`) serves them, so the call is refused at once instead of
// being retried against the real provider with a placeholder key.
type ScriptedModelError struct {
	Model  string
	EnvVar string // the base-URL variable to set, e.g. ANTHROPIC_BASE_URL
}

// Error implements error.
func (e *ScriptedModelError) Error() string {
	return fmt.Sprintf("scripted model %q needs %s pointing at `aos dev model-server`", e.Model, e.EnvVar)
}

// ErrToolsUnsupported is returned (wrapped) by CheckModel for a model that
// cannot call tools.
var ErrToolsUnsupported = errors.New("model cannot call tools")

// ErrUnknownModel is returned (wrapped) for a model that neither the
// catalogue, the configuration nor the provider knows.
var ErrUnknownModel = errors.New("unknown model")

// Redact replaces every occurrence of each non-empty secret in s with
// "[redacted]". Adapters pass provider messages through it so that a key
// echoed back by a server never reaches an error, a log line or a step.
func Redact(s string, secrets ...string) string {
	for _, k := range secrets {
		if len(k) >= 4 {
			s = strings.ReplaceAll(s, k, "[redacted]")
		}
	}
	return s
}

// RetryableStatus reports whether an HTTP status is worth retrying:
// 408, 409, 429 and every 5xx (529 is Anthropic's "overloaded").
func RetryableStatus(status int) bool {
	return status == 408 || status == 409 || status == 429 || status >= 500
}
