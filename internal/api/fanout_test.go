package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
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

// TestFanoutFigures measures commit-to-receipt latency with 100 WebSocket
// clients on one mission while events commit at 200/s from outside the
// server's kernel (as a worker process's would), so only the event poll
// finds them: 10 ms, as aos server sets it, by the one shared listener.
// Opt-in: AOS_BENCH=1.
func TestFanoutFigures(t *testing.T) {
	if os.Getenv("AOS_BENCH") != "1" {
		t.Skip("AOS_BENCH=1 runs the fan-out measurement")
	}
	const clients, rate, seconds = 100, 200, 3
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) {
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
			t.Logf("%s: %d clients, %d events at %d/s: p50 %v p99 %v max %v", driver, clients, total, rate,
				lat[len(lat)/2].Round(time.Millisecond), lat[len(lat)*99/100].Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond))
		})
	}
}

func newServer(t *testing.T, svc *mission.Service) string {
	s := httptestServer(api.New(svc, api.Options{}))
	t.Cleanup(s.Close)
	return s.URL
}
