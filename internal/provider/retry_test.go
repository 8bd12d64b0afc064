package provider_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/provider"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		h    map[string]string
		want time.Duration
	}{
		{map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(7 * time.Second).Format(http.TimeFormat)}, 7 * time.Second},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-1"}, 0},
		{map[string]string{}, 0},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		if got := provider.ParseRetryAfter(h, now); got != c.want {
			t.Errorf("%v: %v, want %v", c.h, got, c.want)
		}
	}
}

func TestRetryDo(t *testing.T) {
	t.Parallel()
	retryable := &provider.ProviderError{Code: "overloaded_error", Retryable: true}
	cases := []struct {
		name     string
		errs     []error
		attempts int
		sleeps   []time.Duration
		wantErr  bool
	}{
		{"success first", []error{nil}, 1, nil, false},
		{"two transient then success", []error{retryable, retryable, nil}, 3, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, false},
		{"retry-after wins", []error{&provider.ProviderError{Retryable: true, RetryAfter: 5 * time.Second}, nil}, 2, []time.Duration{5 * time.Second}, false},
		{"not retryable", []error{&provider.ProviderError{Status: 400}}, 1, nil, true},
		{"plain error", []error{errors.New("boom")}, 1, nil, true},
		{"retry-after too long", []error{&provider.ProviderError{Retryable: true, RetryAfter: time.Hour}}, 1, nil, true},
		{"gives up after max", []error{retryable, retryable, retryable, retryable}, 3,
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var slept []time.Duration
			p := provider.RetryPolicy{MaxAttempts: 3, BaseDelay: 100 * time.Millisecond,
				Sleep:  func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil },
				Jitter: func(d time.Duration) time.Duration { return d }}
			n, err := p.Do(context.Background(), func(_ context.Context, i int) error {
				e := c.errs[i-1]
				if pe, ok := e.(*provider.ProviderError); ok {
					cp := *pe
					return &cp
				}
				return e
			})
			if n != c.attempts || (err != nil) != c.wantErr || fmt.Sprint(slept) != fmt.Sprint(c.sleeps) {
				t.Errorf("n=%d err=%v slept=%v", n, err, slept)
			}
			var pe *provider.ProviderError
			if errors.As(err, &pe) && pe.Attempts != n {
				t.Errorf("Attempts = %d, want %d", pe.Attempts, n)
			}
		})
	}
}

func TestRetryStopsOnCancel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	n, err := provider.RetryPolicy{}.Do(ctx, func(context.Context, int) error {
		calls++
		cancel()
		return &provider.ProviderError{Retryable: true}
	})
	if !errors.Is(err, context.Canceled) || n != 1 || calls != 1 {
		t.Errorf("n=%d calls=%d err=%v", n, calls, err)
	}
}

func TestBackoffDefaultsAreBounded(t *testing.T) {
	t.Parallel()
	p := provider.RetryPolicy{}
	for i := 1; i <= 20; i++ {
		d := p.Backoff(i, 0)
		if d <= 0 || d > 30*time.Second {
			t.Errorf("retry %d: %v", i, d)
		}
	}
}

func TestErrorsAndRedaction(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("call: %w", &provider.ProviderError{Provider: provider.Anthropic, Status: 429, Code: "rate_limit_error", Retryable: true, Attempts: 6})
	if !errors.Is(err, &provider.ProviderError{Code: "rate_limit_error"}) || errors.Is(err, &provider.ProviderError{Code: "x"}) {
		t.Error("Is by code")
	}
	if !errors.Is(err, &provider.ProviderError{Status: 429}) || errors.Is(err, &provider.ProviderError{Status: 500}) {
		t.Error("Is by status")
	}
	if got := err.Error(); got != "call: provider anthropic: status 429 rate_limit_error (after 6 attempts)" {
		t.Errorf("message = %q", got)
	}
	if got := provider.Redact("key sk-ABCDEF in text sk-ABCDEF", "sk-ABCDEF", ""); got != "key [redacted] in text [redacted]" {
		t.Errorf("redact = %q", got)
	}
	mk := &provider.MissingKeyError{Provider: provider.OpenAI, EnvVar: "OPENAI_API_KEY"}
	if mk.Error() != "provider openai: API key missing: set OPENAI_API_KEY in the environment" {
		t.Errorf("missing key = %q", mk.Error())
	}
}
