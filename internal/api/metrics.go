package api

import (
	"errors"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aos-run/aos/internal/auth"
	"github.com/aos-run/aos/internal/metrics"
	"github.com/aos-run/aos/internal/mission"
)

// MetricsPath is where the server serves its metrics, outside Prefix: it
// is for operators' scrapers, not API clients.
const MetricsPath = "/metrics"

// mountMetrics serves Options.Metrics on GET /metrics, with the number of
// open event sockets. A request straight from this machine's loopback
// (metrics.LocalRequest: no proxy forwarding headers) is served; any other
// needs an API token with the read scope in a Bearer header (an owner
// session's cookie is not accepted: scrapers hold tokens, and a browser
// page must not read metrics).
func (s *Server) mountMetrics() {
	m := s.opts.Metrics
	if m == nil {
		return
	}
	_ = m.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "aos_ws_clients", Help: "Event WebSockets open on this server."},
		func() float64 { return float64(s.WSClients()) }))
	h := m.Handler()
	s.mux.Handle("GET "+MetricsPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !metrics.LocalRequest(r) {
			if tokenOf(r) == "" {
				writeError(w, r, s.opts.Logger, &apiError{status: http.StatusForbidden, code: string(mission.CodeForbidden),
					msg: "metrics are served to this machine's loopback, or to an API token with the read scope"})
				return
			}
			p, err := s.svc.Authenticate(r.Context(), tokenOf(r))
			if err != nil {
				writeError(w, r, s.opts.Logger, err)
				return
			}
			if !p.Can(mission.ScopeRead) {
				writeError(w, r, s.opts.Logger, &mission.Error{Code: mission.CodeForbidden, Msg: "the credential lacks the read scope"})
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
}

// observeLogin counts a refused owner login by method and reason.
func (s *Server) observeLogin(method string, err error) {
	switch {
	case err == nil:
	case errors.Is(err, auth.ErrThrottled):
		s.opts.Metrics.LoginRefused(method, metrics.LoginThrottled)
	case errors.Is(err, auth.ErrUnauthorized):
		s.opts.Metrics.LoginRefused(method, metrics.LoginFailed)
	}
}
