package metrics_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aos-run/aos/internal/metrics"
	"github.com/aos-run/aos/internal/provider"
)

// TestLocalOnly: a worker's metrics go to loopback peers whose request no
// proxy forwarded; everyone else gets 403.
func TestLocalOnly(t *testing.T) {
	t.Parallel()
	h := metrics.LocalOnly(metrics.New(metrics.ProcessWorker, "test").Handler())
	for _, tc := range []struct {
		name   string
		remote string
		header http.Header
		want   int
	}{
		{"loopback v4", "127.0.0.1:4000", nil, 200},
		{"loopback v6", "[::1]:4000", nil, 200},
		{"v4-mapped loopback", "[::ffff:127.0.0.1]:4000", nil, 200},
		{"remote", "192.0.2.1:4000", nil, 403},
		{"remote v6", "[2001:db8::1]:4000", nil, 403},
		{"no port", "127.0.0.1", nil, 403},
		{"forwarded by a local proxy", "127.0.0.1:4000", http.Header{"X-Forwarded-For": {"192.0.2.1"}}, 403},
		{"real ip by a local proxy", "127.0.0.1:4000", http.Header{"X-Real-Ip": {"192.0.2.1"}}, 403},
		{"localhost host", "127.0.0.1:4000", http.Header{"Host": {"localhost:9464"}}, 200},
		{"v6 host", "[::1]:4000", http.Header{"Host": {"[::1]:9464"}}, 200},
		{"host without a port", "127.0.0.1:4000", http.Header{"Host": {"127.0.0.1"}}, 200},
		{"rebound domain", "127.0.0.1:4000", http.Header{"Host": {"evil.example:9464"}}, 403},
		{"public host", "127.0.0.1:4000", http.Header{"Host": {"192.0.2.1:9464"}}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/metrics", nil)
			r.Host = "127.0.0.1:9464"
			if h := tc.header.Get("Host"); h != "" {
				r.Host = h
				tc.header.Del("Host")
			}
			r.RemoteAddr = tc.remote
			for k, v := range tc.header {
				r.Header[k] = v
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("%d, want %d", w.Code, tc.want)
			}
		})
	}
}

// TestNilMetrics: a nil *Metrics records nothing and does not panic, so
// callers (tests, a server without metrics) need no checks.
func TestNilMetrics(t *testing.T) {
	t.Parallel()
	var m *metrics.Metrics
	m.ModelCall("p", "m", "ok", 0, provider.Usage{InputTokens: 1})
	m.SandboxCommand("ok", 0)
	m.RunClaimed("l", 0)
	m.LeaseLost("l")
	m.EventSent()
	m.EventDropped()
	m.LoginRefused("password", metrics.LoginFailed)
	m.WatchStore(nil)
	if err := m.Register(nil); err != nil {
		t.Fatal(err)
	}
}
