package backend

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/aos-run/aos/internal/kernel"
)

// Spend is what an engine's model calls cost, as the proxy metered them.
type Spend struct {
	Calls            int     `json:"calls"`
	Refused          int     `json:"refused,omitempty"`
	InputTokens      int64   `json:"inputTokens"`
	OutputTokens     int64   `json:"outputTokens"`
	CacheReadTokens  int64   `json:"cacheReadTokens,omitempty"`
	CacheWriteTokens int64   `json:"cacheWriteTokens,omitempty"`
	USD              float64 `json:"usd"`
}

func (s Spend) add(o Spend) Spend {
	return Spend{Calls: s.Calls + o.Calls, Refused: s.Refused + o.Refused, InputTokens: s.InputTokens + o.InputTokens,
		OutputTokens: s.OutputTokens + o.OutputTokens, CacheReadTokens: s.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: s.CacheWriteTokens + o.CacheWriteTokens, USD: s.USD + o.USD}
}

// usage is the kernel usage a spend charges: each model call is a turn.
func (s Spend) usage() kernel.Usage {
	return kernel.Usage{InputTokens: s.InputTokens, OutputTokens: s.OutputTokens, CacheReadTokens: s.CacheReadTokens,
		CacheWriteTokens: s.CacheWriteTokens, CostUSD: s.USD, Turns: s.Calls}
}

// ledger is the durable record of a run's proxied model calls: one JSON
// line per call, fsynced before the response is returned to the engine,
// in aos's data dir (out of the sandbox's reach). The kernel charges usage
// only when a step's result is recorded; an engine step interrupted by a
// crash records none, so its calls are charged from this ledger by the
// step that follows (a rerun, or the owner keeping the partial changes).
type ledger struct {
	path string

	mu sync.Mutex // guards writes
}

func ledgerFor(dataDir, runID string) (*ledger, error) {
	dir := filepath.Join(dataDir, "backend", runID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("backend: make ledger dir: %w", err)
	}
	return &ledger{path: filepath.Join(dir, "model-calls.jsonl")}, nil
}

// append records one call's spend durably.
func (l *ledger) append(s Spend) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("backend: open ledger: %w", err)
	}
	b, _ := json.Marshal(s)
	_, err = f.Write(append(b, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("backend: write ledger: %w", err)
	}
	return nil
}

// total sums the ledger; a torn last line (a crash mid-write) is skipped.
func (l *ledger) total() (Spend, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.Open(l.path)
	if os.IsNotExist(err) {
		return Spend{}, nil
	}
	if err != nil {
		return Spend{}, fmt.Errorf("backend: read ledger: %w", err)
	}
	defer f.Close()
	var t Spend
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s Spend
		if json.Unmarshal(sc.Bytes(), &s) == nil {
			t = t.add(s)
		}
	}
	return t, sc.Err()
}
