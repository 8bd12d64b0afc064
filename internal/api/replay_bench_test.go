package api_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// BenchmarkReplay5000 is the time a reconnecting client waits for its
// replay: dial the events socket with cursor 0 over 5,010 stored events and
// read the 5,000 replayed ones and the gap notice. Side by side, the floor:
// the same events read from the store in pages of 500 and encoded to JSON,
// with no HTTP, no WebSocket and no auth.
//
//	AOS_TEST_POSTGRES_URL=… go test -run '^$' -bench Replay5000 ./internal/api
func BenchmarkReplay5000(b *testing.B) {
	for _, driver := range storetest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			bd := setup(b, storetest.New(b, driver))
			bd.emit("m1", api.MaxReplay+10, 100)
			ctx := context.Background()
			b.Run("websocket", func(b *testing.B) {
				for b.Loop() {
					c, _, err := websocket.Dial(ctx, bd.wsURL("?cursor=0"), &websocket.DialOptions{Subprotocols: []string{"bearer." + bd.read}})
					if err != nil {
						b.Fatal(err)
					}
					c.SetReadLimit(1 << 20)
					var last []byte
					for i := 0; i <= api.MaxReplay; i++ {
						_, data, err := c.Read(ctx)
						if err != nil {
							b.Fatal(err)
						}
						last = data
					}
					bd.record(last) // the gap notice, scanned for secrets like every response
					_ = c.CloseNow()
				}
			})
			b.Run("floor", func(b *testing.B) {
				for b.Loop() {
					var cursor int64
					for n := 0; n < api.MaxReplay; {
						evs, err := bd.st.ListEvents(ctx, store.ListEventsParams{After: cursor, Limit: 500})
						if err != nil || len(evs) == 0 {
							b.Fatal(err)
						}
						for _, e := range evs {
							if _, err := json.Marshal(e); err != nil {
								b.Fatal(err)
							}
							cursor = e.ID
						}
						n += len(evs)
					}
				}
			})
		})
	}
}
