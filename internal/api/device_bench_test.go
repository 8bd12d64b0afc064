package api_test

import (
	"testing"

	"github.com/aos-run/aos/internal/device"
)

// BenchmarkDeviceRoundTrip measures one operation.get and its answer over a
// paired WebSocket, the agent service answering at once: the channel's own
// cost per request (gates, strict decoding, JSON, the socket).
func BenchmarkDeviceRoundTrip(b *testing.B) {
	bb := deviceBundle(b, &fakeOps{machine: "m"}, device.Limits{Rate: 1e9, Burst: 1 << 30, RequestIDs: 1 << 20})
	d := bb.mustDial(bb.pair("bench").Token)
	d.hello()
	b.ResetTimer()
	for b.Loop() {
		if m := d.call(map[string]any{"type": "operation.get", "operationId": "x"}); errCode(m) != "" {
			b.Fatal(m)
		}
	}
}
