package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/aos-run/aos/internal/kernel"
)

// A shell command's result is captured durably when the command ends,
// before the step's result is committed: <data dir>/shell-results/<run
// id>/<seq>.json, out of the sandbox's reach (the data dir is hidden from
// commands), written to a temporary file, synced and renamed. After a crash
// the step's probe reads it: a capture means the command ran to its end and
// records exactly what the model would have read; no capture means aos
// cannot tell (the command was interrupted, or ended just before its
// capture was saved), so the owner is asked. A capture is removed before
// the command runs, so an attempt never reads an earlier attempt's.

// safeCaptureKey is a step's idempotency key, <run id>/<seq>.
var safeCaptureKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([A-Za-z0-9-]{1,64})/([0-9]{1,9})$`) })

// capturePath is where a shell step's capture lives; "" when there is no
// data dir or the key is not a step key.
func capturePath(dataDir, key string) string {
	m := safeCaptureKey().FindStringSubmatch(key)
	if dataDir == "" || m == nil {
		return ""
	}
	return filepath.Join(dataDir, "shell-results", m[1], m[2]+".json")
}

type shellCapture struct {
	Key    string     `json:"key"`
	Result stepResult `json:"result"`
}

// clearCapture removes a step's capture before its command runs.
func clearCapture(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("engine: remove shell capture: %w", err)
	}
	return syncDir(filepath.Dir(path))
}

// writeCapture saves a finished command's result durably.
func writeCapture(path, key string, r stepResult) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("engine: shell capture dir: %w", err)
	}
	body, err := json.Marshal(shellCapture{Key: key, Result: r})
	if err != nil {
		return fmt.Errorf("engine: encode shell capture: %w", err)
	}
	f, err := os.CreateTemp(dir, ".capture-*")
	if err != nil {
		return fmt.Errorf("engine: shell capture: %w", err)
	}
	defer os.Remove(f.Name()) // after a successful rename, a no-op
	_, err = f.Write(body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("engine: write shell capture: %w", err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("engine: sync %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("engine: sync %s: %w", dir, err)
	}
	return nil
}

// probeCapture is the shell step's reconcile probe.
func probeCapture(dataDir string) func(ctx context.Context, _ json.RawMessage, key string) (kernel.ReconcileOutcome, error) {
	return func(ctx context.Context, _ json.RawMessage, key string) (kernel.ReconcileOutcome, error) {
		path := capturePath(dataDir, key)
		if path == "" {
			return kernel.ReconcileOutcome{Answer: kernel.ReconcileUnknown}, nil
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return kernel.ReconcileOutcome{Answer: kernel.ReconcileUnknown,
				Note: "aos saves a command's exit status and output when it ends; there is none for this one, so it was interrupted before it ended, or ended just before its output was saved."}, nil
		}
		if err != nil {
			return kernel.ReconcileOutcome{}, fmt.Errorf("engine: read shell capture: %w", err)
		}
		var c shellCapture
		if err := json.Unmarshal(b, &c); err != nil || c.Key != key {
			return kernel.ReconcileOutcome{}, fmt.Errorf("engine: shell capture %s is not this step's", path)
		}
		return kernel.ReconcileOutcome{Answer: kernel.ReconcileDone, Result: c.Result}, nil
	}
}
