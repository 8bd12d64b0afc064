package anthropic_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/anthropic"
	"github.com/aos-run/aos/internal/provider/script"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
)

const testKey = "sk-ant-test-SECRET-0123456789"

// sleeps records the waits of the retry policy without waiting.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

type bundle struct {
	srv    *script.Server
	a      *anthropic.Adapter
	sleeps *sleeps
}

// setup starts a scripted server with scriptYAML and an adapter pointed at
// it through ANTHROPIC_BASE_URL (an injected environment).
func setup(t *testing.T, scriptYAML string, mods ...func(*provider.Config)) bundle {
	t.Helper()
	srv := scripttest.Start(t, scriptYAML)
	sl := &sleeps{}
	env := map[string]string{provider.EnvAnthropicKey: testKey, provider.EnvAnthropicBase: srv.URL()}
	cfg := provider.Config{
		Getenv: func(k string) string { return env[k] },
		Retry:  provider.RetryPolicy{Sleep: sl.sleep, Jitter: func(d time.Duration) time.Duration { return d }},
	}
	for _, m := range mods {
		m(&cfg)
	}
	return bundle{srv: srv, a: anthropic.New(cfg), sleeps: sl}
}
