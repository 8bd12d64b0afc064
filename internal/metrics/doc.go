// Package metrics holds aos's Prometheus metrics. Each process owns one
// Metrics value, with its own registry (no global state, nothing in
// prometheus.DefaultRegisterer): the server exposes the API's and the
// database's figures on GET /metrics, a worker its own on AOS_METRICS_ADDR.
//
// Figures kept in the database (runs by state, steps, reconcile questions,
// spend) are read at scrape time by a collector, so the hot paths are not
// touched. Events that live only in a process (a model call's latency, a
// sandboxed command, a claim, a WebSocket send, a refused login) are
// reported through narrow observer interfaces that *Metrics implements;
// every method is safe on a nil *Metrics, so callers need no checks.
//
// Labels never carry a prompt, an output, a command line, a path or a
// secret; their values come from small sets (providers, models in use,
// outcomes, states). docs/METRICS.md lists every metric.
//
// It imports store (for the scrape-time collector) and nothing above it.
package metrics
