package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/aos-run/aos/internal/provider"
)

// Metrics is one process's metrics. The zero value is not usable; a nil
// *Metrics is, and records nothing.
type Metrics struct {
	reg *prometheus.Registry

	modelCalls    *prometheus.CounterVec
	modelDuration *prometheus.HistogramVec
	modelTokens   *prometheus.CounterVec

	sandboxCommands *prometheus.CounterVec
	sandboxDuration prometheus.Histogram

	claims      *prometheus.CounterVec
	claimWait   *prometheus.HistogramVec
	leaseLosses *prometheus.CounterVec

	wsEventsSent    prometheus.Counter
	wsEventsDropped prometheus.Counter

	logins *prometheus.CounterVec
}

// Process names the process kind in aos_build_info: "server" or "worker".
type Process string

// The processes that expose metrics.
const (
	ProcessServer Process = "server"
	ProcessWorker Process = "worker"
)

// New returns the metrics of one process, with the Go runtime's and the
// process's standard collectors and aos_build_info.
func New(process Process, version string) *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		reg: reg,
		modelCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "aos_model_calls_total",
			Help: "Model calls made by this worker, by provider, model and outcome (ok, error, cancelled)."}, []string{"provider", "model", "outcome"}),
		modelDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "aos_model_call_duration_seconds",
			Help:    "Wall time of a model call, adapter retries included, by provider and model.",
			Buckets: []float64{0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320}}, []string{"provider", "model"}),
		modelTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "aos_model_tokens_total",
			Help: "Tokens of successful model calls, by provider, model and kind (input, output, cache_read, cache_write)."}, []string{"provider", "model", "kind"}),
		sandboxCommands: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "aos_sandbox_commands_total",
			Help: "Sandboxed shell commands run by this worker, by outcome (ok, failed, timeout, killed, error)."}, []string{"outcome"}),
		sandboxDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "aos_sandbox_command_duration_seconds",
			Help:    "Wall time of a sandboxed shell command.",
			Buckets: []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}}),
		claims: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "aos_kernel_claims_total",
			Help: "Runs claimed and started by this worker, by run logic."}, []string{"logic"}),
		claimWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "aos_kernel_claim_latency_seconds",
			Help:    "Time from a run's creation to its first claim (queueing delay), by run logic.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}}, []string{"logic"}),
		leaseLosses: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "aos_kernel_lease_losses_total",
			Help: "Runs this worker stopped because it lost their lease (fenced or not renewed in time), by run logic."}, []string{"logic"}),
		wsEventsSent: prometheus.NewCounter(prometheus.CounterOpts{Name: "aos_ws_events_sent_total",
			Help: "Events written to event WebSockets (replayed and live)."}),
		wsEventsDropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "aos_ws_events_dropped_total",
			Help: "Events a WebSocket could not take because it was too far behind; the socket is closed with 1008 each time."}),
		logins: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "aos_auth_login_refusals_total",
			Help: "Owner logins refused, by method (password, passkey) and reason (failed: wrong credentials; throttled: too many attempts)."}, []string{"method", "reason"}),
	}
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "aos_build_info",
		Help: "Always 1; the labels say which aos process and version this is."}, []string{"process", "version"})
	build.WithLabelValues(string(process), version).Set(1)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), build)
	// Each process exports only what it can count: a metric that is always
	// zero would mislead.
	switch process {
	case ProcessServer:
		reg.MustRegister(m.wsEventsSent, m.wsEventsDropped, m.logins)
	case ProcessWorker:
		reg.MustRegister(m.modelCalls, m.modelDuration, m.modelTokens, m.sandboxCommands, m.sandboxDuration, m.claims, m.claimWait, m.leaseLosses)
	}
	return m
}

// Handler serves the metrics in the Prometheus text format (or
// OpenMetrics, when the scraper asks for it). It does not restrict who may
// read them: see api's guard for that.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// Register adds a collector, for figures another package owns (the API's
// WebSocket count).
func (m *Metrics) Register(c prometheus.Collector) error {
	if m == nil {
		return nil
	}
	return m.reg.Register(c)
}

// ModelCall records a model call (worker.ModelObserver).
func (m *Metrics) ModelCall(providerID, model, outcome string, d time.Duration, u provider.Usage) {
	if m == nil {
		return
	}
	m.modelCalls.WithLabelValues(providerID, model, outcome).Inc()
	m.modelDuration.WithLabelValues(providerID, model).Observe(d.Seconds())
	for kind, n := range map[string]int64{"input": u.InputTokens, "output": u.OutputTokens, "cache_read": u.CacheReadTokens, "cache_write": u.CacheWriteTokens} {
		if n > 0 {
			m.modelTokens.WithLabelValues(providerID, model, kind).Add(float64(n))
		}
	}
}

// SandboxCommand records a sandboxed command (worker.CommandObserver).
func (m *Metrics) SandboxCommand(outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.sandboxCommands.WithLabelValues(outcome).Inc()
	m.sandboxDuration.Observe(d.Seconds())
}

// RunClaimed records a claim (kernel.Observer).
func (m *Metrics) RunClaimed(logic string, firstWait time.Duration) {
	if m == nil {
		return
	}
	m.claims.WithLabelValues(logic).Inc()
	if firstWait >= 0 {
		m.claimWait.WithLabelValues(logic).Observe(firstWait.Seconds())
	}
}

// LeaseLost records a lost lease (kernel.Observer).
func (m *Metrics) LeaseLost(logic string) {
	if m == nil {
		return
	}
	m.leaseLosses.WithLabelValues(logic).Inc()
}

// EventSent records an event written to a WebSocket.
func (m *Metrics) EventSent() {
	if m != nil {
		m.wsEventsSent.Inc()
	}
}

// EventDropped records an event a WebSocket was too slow to take.
func (m *Metrics) EventDropped() {
	if m != nil {
		m.wsEventsDropped.Inc()
	}
}

// Login reasons for LoginRefused.
const (
	LoginFailed    = "failed"
	LoginThrottled = "throttled"
)

// LoginRefused records a refused owner login; method is "password" or
// "passkey", reason LoginFailed or LoginThrottled.
func (m *Metrics) LoginRefused(method, reason string) {
	if m != nil {
		m.logins.WithLabelValues(method, reason).Inc()
	}
}
