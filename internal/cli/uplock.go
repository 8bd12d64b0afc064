package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aos-run/aos/internal/hoststate"
)

// upLockName is the file in the data dir that `aos up` holds an exclusive
// flock on while it runs: one `aos up` per data dir (seed 002's device
// singleton). The kernel drops the lock when the process dies, kill -9
// included, so a crashed owner never blocks the next start.
const upLockName = "aos-up.lock"

// upOwner is what the lock holder writes into the lock file so a second
// `aos up` can say who is running.
type upOwner struct {
	PID int    `json:"pid"`
	URL string `json:"url"`
}

// AlreadyRunningError is returned by a second `aos up` on a data dir that
// another live `aos up` holds.
type AlreadyRunningError struct {
	URL string
	PID int
}

// Error implements error.
func (e *AlreadyRunningError) Error() string {
	if e.URL == "" {
		return fmt.Sprintf("aos is already running on this data dir (pid %d)", e.PID)
	}
	return fmt.Sprintf("aos is already running at %s (pid %d)", e.URL, e.PID)
}

// ExitCode is the process exit code: a refusal, not a crash.
func (e *AlreadyRunningError) ExitCode() int { return int(exitFailure) }

// acquireUpLock takes the data dir's singleton lock for `aos up`, or returns
// an *AlreadyRunningError naming the live holder. The returned file must stay
// open for as long as aos up runs; closing it releases the lock. Nothing is
// written or minted before the lock is held.
func acquireUpLock(dataDir, url string) (*os.File, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("aos up: create data dir: %w", err)
	}
	path := filepath.Join(dataDir, upLockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("aos up: open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			var o upOwner
			b := make([]byte, 4096)
			n, _ := f.ReadAt(b, 0)
			_ = json.Unmarshal(b[:n], &o)
			return nil, &AlreadyRunningError{URL: o.URL, PID: o.PID}
		}
		return nil, fmt.Errorf("aos up: lock %s: %w", path, err)
	}
	b, _ := json.Marshal(upOwner{PID: os.Getpid(), URL: url})
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt(b, 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("aos up: write %s: %w", path, err)
	}
	return f, nil
}

// AddrInUseError is returned by `aos up` when its listen address is taken
// by a program that is not an aos up on this data dir.
type AddrInUseError struct {
	Addr string
	Err  error
}

// Error implements error.
func (e *AddrInUseError) Error() string {
	return fmt.Sprintf("cannot listen on %s (set AOS_ADDR to another address): %v", e.Addr, e.Err)
}

// ExitCode is the process exit code.
func (e *AddrInUseError) ExitCode() int { return int(exitFailure) }

// Unwrap returns the listen error.
func (e *AddrInUseError) Unwrap() error { return e.Err }

// checkListen proves addr can be listened on before aos up mints a setup
// token or starts children, so a taken port is one clear error instead of a
// server child restarting forever.
func checkListen(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		var se *os.SyscallError
		if errors.As(err, &se) {
			err = se.Err
		}
		return &AddrInUseError{Addr: addr, Err: errors.New(strings.TrimSpace(err.Error()))}
	}
	return l.Close()
}

// Device lease of aos up (seed 002 S09): the flock above is the first
// gate; the lease in the data dir's host state carries the immutable
// fencing token, which a supervisor renews by CAS every third of
// upLeaseDuration. A renewal that cannot prove the token cancels aos up's
// context: its children stop.
const upLeaseDuration = 15 * time.Second

// hostStateDir is where the data dir's host state files live.
func hostStateDir(dataDir string) string { return filepath.Join(dataDir, "host") }

// claimDevice claims the device singleton lease for this aos up, which
// already holds the data dir's flock: a previous holder is provably gone
// (the kernel dropped its flock), so its lease is released at once. A
// corrupt or future host state file is reported, never reset.
func claimDevice(ctx context.Context, dataDir, url string) (*hoststate.Store, hoststate.Lease, error) {
	s, err := hoststate.Open(hostStateDir(dataDir), "host-state", hoststate.Hooks{})
	if err != nil {
		return nil, hoststate.Lease{}, err
	}
	abs, _ := filepath.Abs(dataDir)
	sum := sha256.Sum256([]byte(abs))
	l, err := hoststate.ClaimDevice(ctx, s, hoststate.Claim{Owner: "aos up", Subject: "datadir:" + hex.EncodeToString(sum[:8]),
		PID: os.Getpid(), URL: url, Duration: upLeaseDuration, Now: time.Now(), Gone: func(hoststate.Lease) bool { return true }})
	if err != nil {
		return nil, l, fmt.Errorf("aos up: %w", err)
	}
	return s, l, nil
}
