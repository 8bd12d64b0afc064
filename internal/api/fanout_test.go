package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/mission"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// BenchmarkFanout measures commit-to-receipt latency with 100 WebSocket
// clients on one mission while events commit at 200/s from outside the
// server's kernel (as a worker process's would), so only the event poll
// finds them: 10 ms, as aos server sets it, by the one shared listener.
// One round per sub-benchmark (3 s of events); it reports ms-p50, ms-p99
// and ms-max of every delivery.
//
//	AOS_TEST_POSTGRES_URL=… go test -run '^$' -bench Fanout ./internal/api
func BenchmarkFanout(b *testing.B) {
	const clients, rate, seconds = 100, 200, 3
	for _, driver := range storetest.Drivers() {
		b.Run(driver, func(t *testing.B) {
			db := storetest.New(t, driver)
			k := kernel.New(db.Store, kernel.Options{EventPoll: 10 * time.Millisecond})
			svc := mission.New(k, mission.Options{WorkspaceRoot: t.TempDir()})
			srv := newServer(t, svc)
			tok, err := svc.CreateToken(context.Background(), "bench", "", []string{"read"})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var mu sync.Mutex
			var lat []time.Duration
			var wg sync.WaitGroup
			total := rate * seconds
			for i := 0; i < clients; i++ {
				c, _, err := websocket.Dial(ctx, "ws"+srv[len("http"):]+api.Prefix+"/events?missionId=m", &websocket.DialOptions{
					HTTPHeader: http.Header{"Authorization": {"Bearer " + tok.Secret}}})
				if err != nil {
					t.Fatal(err)
				}
				defer c.CloseNow()
				wg.Add(1)
				go func() {
					defer wg.Done()
					for n := 0; n < total; n++ {
						_, data, err := c.Read(ctx)
						if err != nil {
							return
						}
						now := time.Now()
						var e mission.Event
						_ = json.Unmarshal(data, &e)
						mu.Lock()
						lat = append(lat, now.Sub(time.UnixMicro(e.CreatedAt)))
						mu.Unlock()
					}
				}()
			}
			tick := time.NewTicker(time.Second / rate)
			for i := 0; i < total; i++ {
				<-tick.C
				// CreatedAt carries the commit's wall time in µs for this
				// measurement.
				err := db.Store.Tx(ctx, func(q store.Queries) error {
					_, err := q.InsertEvent(ctx, store.Event{MissionID: "m", RunID: "r", Kind: "bench", Payload: []byte(`{}`), CreatedAt: time.Now().UnixMicro()})
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			tick.Stop()
			wg.Wait()
			slices.Sort(lat)
			if len(lat) != clients*total {
				t.Fatalf("received %d of %d", len(lat), clients*total)
			}
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			t.ReportMetric(ms(lat[len(lat)/2]), "ms-p50")
			t.ReportMetric(ms(lat[len(lat)*99/100]), "ms-p99")
			t.ReportMetric(ms(lat[len(lat)-1]), "ms-max")
		})
	}
}

func newServer(t testing.TB, svc *mission.Service) string {
	s := httptestServer(api.New(svc, api.Options{}))
	t.Cleanup(s.Close)
	return s.URL
}
