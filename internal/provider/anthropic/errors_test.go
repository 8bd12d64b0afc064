package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/provider"
)

func TestErrorMapping(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		turn      string
		status    int
		code      string
		retryable bool
		attempts  int
	}{
		{"rate limit", `{error: {status: 429, retry_after: 2s}}`, 429, "rate_limit_error", true, 6},
		{"overloaded", `{error: {status: 529}}`, 529, "overloaded_error", true, 6},
		{"server error", `{error: {status: 500}}`, 500, "api_error", true, 6},
		{"invalid key", `{error: {status: 401, message: "invalid x-api-key"}}`, 401, "authentication_error", false, 1},
		{"dropped connection", `{text: "some text that is long enough", error: {drop: true}}`, 0, "connection", true, 6},
		{"overloaded mid-stream", `{text: "x", error: {status: 529, mid_stream: true}}`, 0, "overloaded_error", true, 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, "name: e\nturns: ["+tc.turn+"]\n")
			_, err := b.a.Call(context.Background(), provider.Request{Model: "script:e", Transcript: b.a.InitTranscript("x")})
			var pe *provider.ProviderError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v (%T), want *ProviderError", err, err)
			}
			if pe.Status != tc.status || pe.Code != tc.code || pe.Retryable != tc.retryable || pe.Attempts != tc.attempts {
				t.Errorf("got status=%d code=%s retryable=%v attempts=%d, want %d %s %v %d (%v)",
					pe.Status, pe.Code, pe.Retryable, pe.Attempts, tc.status, tc.code, tc.retryable, tc.attempts, err)
			}
			if n := len(b.srv.Requests()); n != tc.attempts {
				t.Errorf("server saw %d requests, want %d", n, tc.attempts)
			}
			if !errors.Is(err, &provider.ProviderError{Code: tc.code}) {
				t.Errorf("errors.Is by code failed")
			}
		})
	}
}

// TestRetryAfterRealTime shows retry-after honoured in the recorded request
// times, with the real sleep.
func TestRetryAfterRealTime(t *testing.T) {
	t.Parallel()
	b := setup(t, "name: flaky\nturns: [{text: ok, error: {status: 529, retry_after: 300ms, times: 2}}]\n",
		func(c *provider.Config) { c.Retry = provider.RetryPolicy{} })
	if _, err := b.a.Call(context.Background(), provider.Request{Model: "script:flaky", Transcript: b.a.InitTranscript("x")}); err != nil {
		t.Fatal(err)
	}
	reqs := b.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i := 1; i < 3; i++ {
		if gap := reqs[i].Time.Sub(reqs[i-1].Time); gap < 300*time.Millisecond {
			t.Errorf("gap %d = %v, want ≥ 300ms", i, gap)
		}
	}
}

func TestKeyNeverLeaks(t *testing.T) {
	t.Parallel()
	b := setup(t, fmt.Sprintf("name: k\nturns: [{error: {status: 401, message: \"invalid x-api-key %s\"}}]\n", testKey))
	_, err := b.a.Call(context.Background(), provider.Request{Model: "script:k", Transcript: b.a.InitTranscript("x")})
	if err == nil {
		t.Fatal("want an error")
	}
	if strings.Contains(err.Error(), testKey) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), testKey) {
		t.Errorf("key in error: %v", err)
	}
	if !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("error lost its message: %v", err)
	}
	// The SDK error (which holds the request headers) is not in the chain.
	for e := err; e != nil; e = errors.Unwrap(e) {
		if strings.Contains(fmt.Sprintf("%T", e), "apierror") {
			t.Errorf("SDK error kept in chain: %T", e)
		}
	}
	// The recorded request dump has the header, redacted.
	res, err := http.Get(b.srv.URL() + "/_requests")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	dump, _ := io.ReadAll(res.Body)
	if strings.Contains(string(dump), testKey) {
		t.Errorf("key in /_requests")
	}
	var reqs []struct{ Header http.Header }
	if err := json.Unmarshal(dump, &reqs); err != nil || len(reqs) != 1 {
		t.Fatalf("dump: %v", err)
	}
	// This SDK version sends the key as "Authorization: Bearer …".
	if got := reqs[0].Header.Get("Authorization"); got != "[redacted]" {
		t.Errorf("authorization recorded as %q", got)
	}
}

func TestMissingKeyNamesTheVariable(t *testing.T) {
	t.Parallel()
	b := setup(t, "", func(c *provider.Config) {
		c.Getenv = func(string) string { return "" }
	})
	_, err := b.a.Call(context.Background(), provider.Request{Model: "claude-opus-5-5", Transcript: b.a.InitTranscript("x")})
	var mk *provider.MissingKeyError
	if !errors.As(err, &mk) || mk.EnvVar != "ANTHROPIC_API_KEY" || !strings.Contains(err.Error(), "ANTHROPIC_API_KEY") {
		t.Fatalf("err = %v", err)
	}
	if _, err := b.a.ListModels(context.Background()); !errors.As(err, &mk) {
		t.Errorf("ListModels err = %v", err)
	}
}

func TestAssertionFailureNamesTheAssertion(t *testing.T) {
	t.Parallel()
	b := setup(t, "name: a\nturns: [{expect: [{last_user_contains: \"deploy\"}], text: ok}]\n")
	_, err := b.a.Call(context.Background(), provider.Request{Model: "script:a", Transcript: b.a.InitTranscript("hello")})
	var pe *provider.ProviderError
	if !errors.As(err, &pe) || pe.Status != 400 || pe.Retryable {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), `last_user_contains "deploy"`) || !strings.Contains(err.Error(), "turn 0") {
		t.Errorf("err does not name the assertion: %v", err)
	}
}

func TestScriptedModelNeedsNoKey(t *testing.T) {
	t.Parallel()
	b := setup(t, "", func(c *provider.Config) {
		env := map[string]string{provider.EnvAnthropicBase: c.Env(provider.EnvAnthropicBase)}
		c.Getenv = func(k string) string { return env[k] }
	})
	resp, err := b.a.Call(context.Background(), provider.Request{Model: "script:echo", Transcript: b.a.InitTranscript("hi")})
	if err != nil || resp.Blocks[0].Text != "echo: hi" {
		t.Fatalf("resp = %+v, err = %v", resp, err)
	}
}

// TestStalledStreamIsAbandonedAndRetried: a stream that goes silent is cut
// by the idle watchdog and retried; the final error says why.
func TestStalledStreamIsAbandonedAndRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, "name: s\nturns: [{text: partial, stall: true}]\n", func(c *provider.Config) {
		c.IdleTimeout = 100 * time.Millisecond
		c.Retry.MaxAttempts = 2
	})
	_, err := b.a.Call(context.Background(), provider.Request{Model: "script:s", Transcript: b.a.InitTranscript("x")})
	var pe *provider.ProviderError
	if !errors.As(err, &pe) || pe.Code != "stream_idle" || !pe.Retryable || pe.Attempts != 2 {
		t.Fatalf("err = %v", err)
	}
}
