package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store/storeopen"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestWebSocketGetsModelDeltasOfAnotherProcess: a WebSocket client of the
// API server receives, with id -1, the model.delta a run emits in a worker
// kernel over another Store instance of the database (aos up's worker
// process).
func TestWebSocketGetsModelDeltasOfAnotherProcess(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		b := setup(t, db)
		st, err := storeopen.Open(context.Background(), db.DSN)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		worker := kernel.New(st, kernel.Options{DataDir: t.TempDir(), Poll: 20 * time.Millisecond})
		stop := make(chan struct{})
		// The run emits a delta every 20 ms until told to stop: the
		// WebSocket subscribes to transient events after its replay, so
		// the first ones may come before it listens.
		logic := func(rc kernel.RunContext) (kernel.Result, error) {
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for i := 0; ; i++ {
				rc.EmitTransient("model.delta", map[string]any{"turn": 1, "type": "text", "text": fmt.Sprintf("tok%d ", i)})
				select {
				case <-stop:
					return kernel.Result{Status: kernel.StatusDone}, nil
				case <-rc.Context().Done():
					return kernel.Result{}, context.Cause(rc.Context())
				case <-tick.C:
				}
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() {
			_ = worker.RunWorker(ctx, kernel.WorkerConfig{Concurrency: 1, Logics: map[string]kernel.Logic{"emitter": logic}})
		})
		var once sync.Once
		t.Cleanup(func() { once.Do(func() { close(stop) }); cancel(); wg.Wait() })
		mid, _, err := worker.CreateMission(ctx, kernel.MissionSpec{Title: "t", Logic: "emitter"})
		if err != nil {
			t.Fatal(err)
		}
		c := b.dial(ctx, "?cursor=0&missionId="+mid)
		for {
			e := b.next(ctx, c)
			if e.Kind != "model.delta" {
				continue
			}
			var p struct{ Text string }
			_ = json.Unmarshal(e.Payload, &p)
			if e.ID != -1 || e.MissionID != mid || len(p.Text) < 4 || p.Text[:3] != "tok" {
				t.Fatalf("model.delta frame = %+v (%s)", e, e.Payload)
			}
			break
		}
		once.Do(func() { close(stop) })
	})
}
