package kernel_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storetest"
)

// BenchmarkTransientLatency measures emit→receive latency of a transient
// event across two Store instances of one database (as aos up's worker and
// server): from just before EmitTransient in a run on kernel A to its
// arrival at a SubscribeTransient of kernel B, one event at a time. It
// reports the median and the 99th percentile.
//
//	go test -run '^$' -bench TransientLatency -benchtime 2000x ./internal/kernel
func BenchmarkTransientLatency(b *testing.B) {
	for _, driver := range storetest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			x := newCross(b, storetest.New(b, driver))
			ctx, cancel := context.WithCancel(context.Background())
			b.Cleanup(cancel)
			sub := x.b.SubscribeTransient(ctx)
			var lat []time.Duration
			i := 0
			for b.Loop() {
				var t0 time.Time
				x.run(func(rc kernel.RunContext) {
					t0 = time.Now()
					rc.EmitTransient("bench.delta", map[string]any{"i": i, "text": "a token"})
				})
				select {
				case <-sub:
					lat = append(lat, time.Since(t0))
				case <-time.After(5 * time.Second):
					b.Fatalf("event %d not received within 5 s", i)
				}
				i++
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
		})
	}
}
