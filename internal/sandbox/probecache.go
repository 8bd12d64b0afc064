package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// DefaultProbeCacheTTL is how long a cached probe verdict is trusted.
const DefaultProbeCacheTTL = 10 * time.Minute

// maxProbeCache bounds the cache file read.
const maxProbeCache = 1 << 20

// ProbeCache keeps the canary probe's passing verdict in a file, so that
// short-lived commands (`aos sandbox exec`, `aos sandbox check`) need not
// run the probe every time. The verdict is keyed by everything the
// probe's result depends on (see probeKey): a changed key, a missing,
// stale, corrupt or foreign-owned file, or a failed verdict means the
// probe runs again. Only a passing verdict is kept.
type ProbeCache struct {
	// Path is the cache file, in the data dir; "" disables the cache.
	Path string
	// TTL is how long a verdict is trusted (default DefaultProbeCacheTTL).
	TTL time.Duration
	// Version is aos's version, part of the key.
	Version string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// ProbeCachePath is the cache file in dataDir ("" when dataDir is "").
func ProbeCachePath(dataDir string) string {
	if dataDir == "" {
		return ""
	}
	return filepath.Join(dataDir, "sandbox", "probe-verdict.json")
}

// cachedVerdict is the cache file's content.
type cachedVerdict struct {
	Key    string `json:"key"`
	At     int64  `json:"at"` // unix milliseconds
	Open   bool   `json:"open"`
	Report Report `json:"report"`
}

// ProbeCached admits commands on a cached passing verdict of the probe
// when c has a valid one, and otherwise runs Probe and caches its verdict
// if it passed. cached says whether the probe was skipped. Errors writing
// the cache are ignored: the next call probes again.
func (s *Sandbox) ProbeCached(ctx context.Context, c ProbeCache) (r Report, cached bool, err error) {
	if c.Path == "" {
		r, err = s.Probe(ctx)
		return r, false, err
	}
	if c.TTL <= 0 {
		c.TTL = DefaultProbeCacheTTL
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	key := s.probeKey(c.Version)
	if v, ok := readVerdict(c.Path); ok && v.Key == key && v.Report.OK() {
		age := c.Now().Sub(time.UnixMilli(v.At))
		if age >= 0 && age < c.TTL {
			s.mu.Lock()
			s.admitted, s.warmAdmitted, s.openAdmitted = true, true, v.Open
			s.mu.Unlock()
			return v.Report, true, nil
		}
	}
	r, err = s.Probe(ctx)
	if err != nil {
		return r, false, err
	}
	s.mu.Lock()
	open := s.openAdmitted
	s.mu.Unlock()
	_ = writeVerdict(c.Path, cachedVerdict{Key: key, At: c.Now().UnixMilli(), Open: open, Report: r})
	return r, false, nil
}

// probeKey hashes what the probe's verdict depends on: the identity of
// bwrap, slirp4netns and prlimit (path, size, modification and change
// times, inode: an upgrade replaces the file), of the aos executable and
// its version, the kernel release, the effective uid and the resolved
// sandbox configuration.
func (s *Sandbox) probeKey(version string) string {
	ident := func(p string) string {
		if p == "" {
			return "-"
		}
		fi, err := os.Stat(p)
		if err != nil {
			return p + " missing"
		}
		return p + " " + fileIdentity(fi)
	}
	exe, _ := os.Executable()
	k := struct {
		Bwrap, Slirp, Prlimit, Exe, Version, Kernel string
		Euid                                        int
		Config                                      Config
	}{ident(s.cfg.BwrapPath), ident(s.cfg.SlirpPath), ident(s.cfg.PrlimitPath), ident(exe), version, kernelRelease(), os.Geteuid(), s.cfg}
	b, err := json.Marshal(k)
	if err != nil {
		return "unkeyable: " + err.Error() // never matches a stored key
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// readVerdict reads the cache file, refusing anything but a regular file
// of ours that no one else can write, not followed through a symlink.
func readVerdict(path string) (cachedVerdict, bool) {
	var v cachedVerdict
	f, err := openNoFollow(path)
	if err != nil {
		return v, false
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o022 != 0 || !ownedByMe(fi) || fi.Size() > maxProbeCache {
		return v, false
	}
	b, err := io.ReadAll(io.LimitReader(f, maxProbeCache))
	if err != nil || json.Unmarshal(b, &v) != nil {
		return cachedVerdict{}, false
	}
	return v, true
}

// writeVerdict replaces the cache file atomically, mode 0600.
func writeVerdict(path string, v cachedVerdict) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("sandbox: probe cache dir: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".probe-verdict-*")
	if err != nil {
		return fmt.Errorf("sandbox: probe cache: %w", err)
	}
	defer func() { _ = os.Remove(tmp.Name()) }()
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		return fmt.Errorf("sandbox: probe cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("sandbox: probe cache: %w", err)
	}
	return os.Rename(tmp.Name(), path)
}
