package script

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// BenchmarkServer measures the scripted server's throughput on a typical
// streamed turn (thinking, text, two tool calls) per format, with parallel
// clients over loopback.
func BenchmarkServer(b *testing.B) {
	srv := StartForTest(b, richScript)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for f, r := range firstRequests {
		b.Run(string(f), func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, err := client.Post(srv.URL()+r.path, "application/json", strings.NewReader(r.body))
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
			srv.Reset()
		})
	}
}
