package store_test

// BenchmarkLeaseHeartbeat is what keeping 1,000 runs' leases alive costs one
// worker per heartbeat, on both drivers (PostgreSQL through
// AOS_TEST_POSTGRES_URL):
//
//	go test -run '^$' -bench LeaseHeartbeat -benchtime 20x ./internal/store
//
// "batched" is today's heartbeat: one RenewLeases statement for every lease.
// "per-run-fence" and "per-run-cancel-poll" are the heartbeat before issue
// 17, side by side: one FenceRun per run (every 30 s) and one GetRun per run
// for the cancel poll (every 1 s). One op is one beat of all 1,000 runs.

import (
	"context"
	"fmt"
	"testing"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

const benchLeaseRuns = 1000

func BenchmarkLeaseHeartbeat(b *testing.B) {
	for _, driver := range storetest.Drivers() {
		b.Run(driver, func(b *testing.B) {
			db := storetest.New(b, driver)
			ctx, s := context.Background(), db.Store
			held := make([]store.LeaseRef, 0, benchLeaseRuns)
			for i := range benchLeaseRuns {
				id := fmt.Sprintf("r%04d", i)
				err := s.Tx(ctx, func(q store.Queries) error {
					if err := q.InsertMission(ctx, store.Mission{ID: "m-" + id, Status: "queued", RootRunID: id, CreatedAt: int64(i), UpdatedAt: int64(i)}); err != nil {
						return err
					}
					return q.InsertRun(ctx, store.Run{ID: id, MissionID: "m-" + id, Logic: "l", Status: "queued", CreatedAt: int64(i), UpdatedAt: int64(i)})
				})
				if err != nil {
					b.Fatal(err)
				}
				r, err := s.ClaimRun(ctx, store.ClaimRunParams{WorkerID: "w", Now: 1, LeaseUntil: 1 << 40})
				if err != nil {
					b.Fatal(err)
				}
				held = append(held, store.LeaseRef{RunID: r.ID, Token: r.FencingToken})
			}
			b.Run("batched", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					got, err := s.RenewLeases(ctx, store.RenewLeasesParams{Owner: "w", Held: held, LeaseUntil: 1<<40 + int64(i)})
					if err != nil || len(got) != benchLeaseRuns {
						b.Fatalf("renewed %d: %v", len(got), err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/beat")
				b.ReportMetric(1, "stmts/beat")
			})
			b.Run("per-run-fence", func(b *testing.B) {
				for i := 0; b.Loop(); i++ {
					for _, h := range held {
						if _, err := s.FenceRun(ctx, store.Fence{RunID: h.RunID, Owner: "w", Token: h.Token}, 2, 1<<40+int64(i)); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/beat")
				b.ReportMetric(benchLeaseRuns, "stmts/beat")
			})
			b.Run("per-run-cancel-poll", func(b *testing.B) {
				for b.Loop() {
					for _, h := range held {
						if _, err := s.GetRun(ctx, h.RunID); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/beat")
				b.ReportMetric(benchLeaseRuns, "stmts/beat")
			})
		})
	}
}
