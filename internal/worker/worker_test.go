package worker_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/aos-run/aos/internal/config"
	"github.com/aos-run/aos/internal/worker"
)

// TestWorkerServesMetrics: a worker with AOS_METRICS_ADDR serves its own
// metrics there, in the Prometheus text format, and stops serving them
// when it stops.
func TestWorkerServesMetrics(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	cfg := config.Config{DataDir: dir + "/data", WorkspaceRoot: dir + "/ws", MaxConcurrentRuns: 1, LogLevel: "info", WorkerID: "w-metrics", MetricsAddr: addr}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- worker.Run(ctx, cfg, slog.New(slog.DiscardHandler), "v-test") }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the worker did not stop")
		}
	})

	var body string
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				body = string(b)
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics on %s: %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("worker metrics do not parse: %v", err)
	}
	bi := fams["aos_build_info"]
	if bi == nil || len(bi.GetMetric()) != 1 {
		t.Fatalf("no aos_build_info in %s", body)
	}
	labels := map[string]string{}
	for _, l := range bi.GetMetric()[0].GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["process"] != "worker" || labels["version"] != "v-test" {
		t.Errorf("aos_build_info labels %v", labels)
	}
	for _, name := range []string{"aos_ws_clients", "aos_runs"} {
		if fams[name] != nil {
			t.Errorf("the worker serves %s, the server's metric", name)
		}
	}
}
