package wire

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
