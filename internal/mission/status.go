package mission

import (
	"context"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/wire"
)

// WorkerAlive is how recent a worker's heartbeat must be for it to count
// as alive.
const WorkerAlive = 60 * time.Second

// Status is wire.Status, its JSON form on the API.
type Status = wire.Status

// DBStatus is wire.DBStatus, its JSON form on the API.
type DBStatus = wire.DBStatus

// WorkerStatus is wire.WorkerStatus, its JSON form on the API.
type WorkerStatus = wire.WorkerStatus

// WorkerHealth is wire.WorkerHealth, its JSON form on the API.
type WorkerHealth = wire.WorkerHealth

// ProviderStatus is wire.ProviderStatus, its JSON form on the API.
type ProviderStatus = wire.ProviderStatus

// Counts is wire.Counts, its JSON form on the API.
type Counts = wire.Counts

// Status collects the system's health. A database that does not answer is
// reported, not returned as an error.
func (s *Service) Status(ctx context.Context) Status {
	now := s.now()
	out := Status{CollectedAt: now.UnixMilli(), Version: s.opts.Version, WorkspaceRoot: s.opts.WorkspaceRoot, DataDir: s.opts.DataDir,
		DB:        DBStatus{Dialect: s.st.Dialect()},
		Worker:    WorkerStatus{Workers: []WorkerHealth{}},
		Providers: ProviderStatus{Anthropic: s.opts.Getenv("ANTHROPIC_API_KEY") != "", OpenAI: s.opts.Getenv("OPENAI_API_KEY") != ""}}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	t0 := time.Now()
	err := s.st.Ping(pctx)
	out.DB.LatencyMs = float64(time.Since(t0).Microseconds()) / 1000
	out.DB.OK = err == nil
	if !out.DB.OK {
		return out
	}
	if ws, err := s.st.ListWorkers(ctx); err == nil {
		for _, w := range ws {
			alive := now.Sub(time.UnixMilli(w.LastSeen)) < WorkerAlive
			out.Worker.Workers = append(out.Worker.Workers, WorkerHealth{ID: w.ID, Version: w.Version, Hostname: w.Hostname, StartedAt: w.StartedAt, LastSeen: w.LastSeen, Alive: alive})
			out.Worker.Alive = out.Worker.Alive || alive
			if alive {
				out.Worker.Count++
			}
			out.Worker.LastSeenAt = max(out.Worker.LastSeenAt, w.LastSeen)
		}
	}
	if c, err := s.st.CountMissionsByStatus(ctx); err == nil {
		out.Counts.MissionsQueued, out.Counts.MissionsRunning, out.Counts.MissionsWaiting = c[kernel.StatusQueued], c[kernel.StatusRunning], c[kernel.StatusWaiting]
	}
	if ws, err := s.st.ListWaits(ctx, store.ListWaitsParams{Status: "pending", Limit: 1000}); err == nil {
		out.Counts.PendingWaits = len(ws)
	}
	return out
}
