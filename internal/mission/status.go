package mission

import (
	"context"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/store"
)

// WorkerAlive is how recent a worker's heartbeat must be for it to count
// as alive.
const WorkerAlive = 60 * time.Second

// Status is the system's health as presented. It holds presence booleans
// for provider keys, never the keys.
type Status struct {
	CollectedAt int64 `json:"collectedAt"`
	// Version is the server process's version; each worker's is in
	// Worker.Workers.
	Version string `json:"version"`
	// WorkspaceRoot confines every mission's workspace; DataDir holds the
	// server's SQLite database (when it uses one) and artifacts.
	WorkspaceRoot string         `json:"workspaceRoot"`
	DataDir       string         `json:"dataDir"`
	DB            DBStatus       `json:"db"`
	Worker        WorkerStatus   `json:"worker"`
	Providers     ProviderStatus `json:"providers"`
	Counts        Counts         `json:"counts"`
}

// DBStatus is the database's reachability and round-trip time.
type DBStatus struct {
	OK bool `json:"ok"`
	// Dialect is the database kind: "sqlite" or "postgres".
	Dialect   string  `json:"dialect"`
	LatencyMs float64 `json:"latencyMs"`
}

// WorkerStatus says whether any worker heartbeat is recent.
type WorkerStatus struct {
	Alive bool `json:"alive"`
	// Count is how many workers are alive (a heartbeat within WorkerAlive).
	Count      int            `json:"count"`
	LastSeenAt int64          `json:"lastSeenAt,omitempty"`
	Workers    []WorkerHealth `json:"workers"`
}

// WorkerHealth is one worker's heartbeat row.
type WorkerHealth struct {
	ID        string `json:"id"`
	Version   string `json:"version"`
	Hostname  string `json:"hostname"`
	StartedAt int64  `json:"startedAt"`
	LastSeen  int64  `json:"lastSeen"`
	Alive     bool   `json:"alive"`
}

// ProviderStatus says which provider keys are set in the environment.
type ProviderStatus struct {
	Anthropic bool `json:"anthropic"`
	OpenAI    bool `json:"openai"`
}

// Counts are missions by live status and pending waits. WSClients is
// filled by the API, which owns the sockets.
type Counts struct {
	MissionsQueued  int `json:"missionsQueued"`
	MissionsRunning int `json:"missionsRunning"`
	MissionsWaiting int `json:"missionsWaiting"`
	PendingWaits    int `json:"pendingWaits"`
	WSClients       int `json:"wsClients"`
}

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
