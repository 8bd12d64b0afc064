//go:build linux

package sandbox_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/sandbox"
)

func TestProbeCache(t *testing.T) {
	now := time.Now()
	cases := []struct {
		name string
		// spoil changes the cache (or the clock, or the cache's key)
		// after a first probe wrote it; cached is whether the second call
		// must be served from it.
		spoil  func(t *testing.T, path string, c *sandbox.ProbeCache)
		cached bool
	}{
		{"valid", func(*testing.T, string, *sandbox.ProbeCache) {}, true},
		{"missing", func(t *testing.T, p string, _ *sandbox.ProbeCache) { rm(t, p) }, false},
		{"stale", func(_ *testing.T, _ string, c *sandbox.ProbeCache) {
			c.Now = func() time.Time { return now.Add(11 * time.Minute) }
		}, false},
		{"from the future", func(_ *testing.T, _ string, c *sandbox.ProbeCache) {
			c.Now = func() time.Time { return now.Add(-time.Minute) }
		}, false},
		{"other aos version", func(_ *testing.T, _ string, c *sandbox.ProbeCache) { c.Version = "v9.9.9" }, false},
		{"corrupt", func(t *testing.T, p string, _ *sandbox.ProbeCache) {
			writeFile(t, p, `{"key": "x", "report": `)
			chmod(t, p, 0o600)
		}, false},
		{"failed verdict", func(t *testing.T, p string, _ *sandbox.ProbeCache) {
			edit(t, p, func(v map[string]any) {
				v["report"] = map[string]any{"checks": []any{map[string]any{"name": "write_outside_refused", "ok": false}}}
			})
		}, false},
		{"world-writable", func(t *testing.T, p string, _ *sandbox.ProbeCache) { chmod(t, p, 0o666) }, false},
		{"foreign-owned", func(t *testing.T, p string, _ *sandbox.ProbeCache) {
			if os.Geteuid() != 0 {
				t.Skip("needs root to give the file away")
			}
			if err := os.Chown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"symlink", func(t *testing.T, p string, _ *sandbox.ProbeCache) {
			real := p + ".real"
			if err := os.Rename(p, real); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(real, p); err != nil {
				t.Fatal(err)
			}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := newSetup(t)
			cfg := sandbox.Config{HostHome: st.home, StateDir: realTemp(t)}
			pc := sandbox.ProbeCache{Path: sandbox.ProbeCachePath(realTemp(t)), Version: "v1", Now: func() time.Time { return now }}
			if _, cached, err := newSandbox(t, cfg).ProbeCached(context.Background(), pc); err != nil || cached {
				t.Fatalf("first call: cached %v, err %v; want a probe", cached, err)
			}
			c.spoil(t, pc.Path, &pc)
			sb := newSandbox(t, cfg) // a new process, in effect
			r, cached, err := sb.ProbeCached(context.Background(), pc)
			if err != nil || cached != c.cached || !r.OK() {
				t.Fatalf("second call: cached %v, err %v, ok %v; want cached %v", cached, err, r.OK(), c.cached)
			}
			// Admitted either way: a command runs.
			out, err := sb.Run(context.Background(), st.warmSpec("echo admitted"))
			if err != nil || string(out.Output) != "admitted\n" {
				t.Fatalf("run after the verdict: %v %q", err, out.Output)
			}
		})
	}
}

// TestProbeCacheFailsClosed: a valid cached verdict does not admit a
// sandbox whose bwrap is gone (the key names bwrap), and a failed probe
// is not cached.
func TestProbeCacheFailsClosed(t *testing.T) {
	st := newSetup(t)
	pc := sandbox.ProbeCache{Path: sandbox.ProbeCachePath(realTemp(t)), Version: "v1"}
	if _, _, err := st.sb.ProbeCached(context.Background(), pc); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(realTemp(t), "bwrap")
	sb := newSandbox(t, sandbox.Config{HostHome: st.home, BwrapPath: gone})
	if _, cached, err := sb.ProbeCached(context.Background(), pc); err == nil || cached {
		t.Fatalf("a sandbox without bwrap: cached %v, err %v; want the probe to fail", cached, err)
	}
	if _, err := sb.Run(context.Background(), st.warmSpec("true")); err == nil {
		t.Fatal("a command ran without bwrap")
	}
}

func rm(t *testing.T, p string) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
}

func chmod(t *testing.T, p string, m os.FileMode) {
	t.Helper()
	if err := os.Chmod(p, m); err != nil {
		t.Fatal(err)
	}
}

// edit rewrites the cache file's JSON, keeping its mode and owner.
func edit(t *testing.T, p string, f func(map[string]any)) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	f(v)
	if b, err = json.Marshal(v); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
