package metrics

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/aos-run/aos/internal/store"
)

// storeCollector reads the figures kept in the database at scrape time.
type storeCollector struct {
	st      store.Store
	timeout time.Duration

	runs, steps, missions, reconcile, spend, up *prometheus.Desc
}

// WatchStore adds the database's figures: runs and missions by state,
// steps by kind and status, reconcile questions and spend. They are read
// at each scrape (within 5 s), so every process on the database reports
// the same totals; aos_store_up says whether the read worked.
func (m *Metrics) WatchStore(st store.Store) {
	if m == nil {
		return
	}
	m.reg.MustRegister(&storeCollector{st: st, timeout: 5 * time.Second,
		runs:      prometheus.NewDesc("aos_runs", "Runs by state, in the database.", []string{"state"}, nil),
		missions:  prometheus.NewDesc("aos_missions", "Missions by state, in the database.", []string{"state"}, nil),
		steps:     prometheus.NewDesc("aos_steps", "Journal steps by kind and status, in the database.", []string{"kind", "status"}, nil),
		reconcile: prometheus.NewDesc("aos_kernel_reconcile_asks_total", "Reconcile questions opened (a step that may or may not have run, asked of the owner).", nil, nil),
		spend:     prometheus.NewDesc("aos_spend_usd_total", "Model spend of every mission, in USD.", nil, nil),
		up:        prometheus.NewDesc("aos_store_up", "1 when the database figures were read at this scrape, 0 when the read failed.", nil, nil),
	})
}

// Describe implements prometheus.Collector.
func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.runs, c.missions, c.steps, c.reconcile, c.spend, c.up} {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	mc, err := c.st.MetricCounts(ctx)
	var ms map[string]int
	if err == nil {
		ms, err = c.st.CountMissionsByStatus(ctx)
	}
	if err != nil {
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	for s, n := range mc.RunsByStatus {
		ch <- prometheus.MustNewConstMetric(c.runs, prometheus.GaugeValue, float64(n), s)
	}
	for s, n := range ms {
		ch <- prometheus.MustNewConstMetric(c.missions, prometheus.GaugeValue, float64(n), s)
	}
	for _, s := range mc.Steps {
		ch <- prometheus.MustNewConstMetric(c.steps, prometheus.GaugeValue, float64(s.N), s.Kind, s.Status)
	}
	ch <- prometheus.MustNewConstMetric(c.reconcile, prometheus.CounterValue, float64(mc.ReconcileAsks))
	ch <- prometheus.MustNewConstMetric(c.spend, prometheus.CounterValue, mc.SpentUSD)
}
