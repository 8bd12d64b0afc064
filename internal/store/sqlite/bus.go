package sqlite

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// Cross-process publish and subscribe on SQLite, whose processes share one
// machine: unix datagram sockets in a private directory next to the
// database file, <db>.events/ (mode 0700). Each subscription binds
// <channel>-<random>.sock there; Publish sends the payload to every socket
// of the channel non-blockingly (MSG_DONTWAIT), through one connected
// socket per receiver, so a receiver that stops reading fills only its own
// queue. A receiver whose queue stays full loses the payload (counted, see
// send); a socket file nobody is bound to any more (its process died
// without unlinking it) refuses with ECONNREFUSED and is removed.
//
// A socket path must fit in sockaddr_un (108 bytes on Linux, 104 on macOS,
// including the NUL). When <db>.events/<name> would not, the directory is
// os.TempDir()/aos-events-<hash of the database path> instead, which must
// then be a directory (not a symlink) of this user with mode 0700: any
// process that can write into the directory can inject events, and any
// socket in it receives them.
const (
	// maxDatagram is the largest payload Publish sends: under the default
	// socket buffers of Linux and macOS with room to spare.
	maxDatagram = 60 * 1024
	// maxSockPath is sockaddr_un's path room on macOS, the smaller one.
	maxSockPath = 103
	// sockNameLen is len("aos_events-" + 16 hex + ".sock").
	sockNameLen  = len(store.ChannelEvents) + 1 + 16 + len(".sock")
	subscribeBuf = 256
	// sendRetries and sendRetryPause bound the wait for a full subscriber
	// queue to about 5 ms.
	sendRetries    = 40
	sendRetryPause = 125 * time.Microsecond
	receiveBuffer  = 1 << 20
)

// bus is the publishing side of one Store: a connected datagram socket
// per receiver it has sent to.
type bus struct {
	dbPath string

	mu     sync.Mutex
	peers  map[string]*peer // by socket path; guarded by mu
	closed bool             // guarded by mu

	dropped atomic.Int64 // payloads a full receiver queue refused
	stale   atomic.Int64 // stale socket files removed

	// aroundShutdown, when set (tests only), is called by a subscription's
	// closer, after it has woken the reader, with the step that shuts the
	// socket down, which it must call.
	aroundShutdown func(shutdown func())
}

func newBus(dbPath string) *bus {
	if real, err := filepath.EvalSymlinks(dbPath); err == nil {
		dbPath = real // every process must agree on the directory
	}
	return &bus{dbPath: dbPath, peers: map[string]*peer{}}
}

// peer is a connected socket to one subscriber.
type peer struct {
	fd int
	// congested is set when the subscriber's queue stayed full through
	// the retries; later sends to it drop at once until one succeeds.
	congested bool
}

// BusDir returns the directory of the database's event sockets (see the
// package's notes on Publish and Subscribe).
func (s *Store) BusDir() string { return s.bus.dir() }

// BusStats returns how many payloads were dropped because a receiver's
// queue was full, and how many stale socket files were removed.
func (s *Store) BusStats() (dropped, staleRemoved int64) {
	return s.bus.dropped.Load(), s.bus.stale.Load()
}

// MaxPayload is 60 KiB, a datagram every unix socket buffer takes.
func (s *Store) MaxPayload() int { return maxDatagram }

// Publish sends payload on ch to every subscriber of this database on this
// machine, this process's included, without waiting for any of them.
func (s *Store) Publish(_ context.Context, ch string, payload []byte) error {
	if err := knownChannel(ch); err != nil {
		return err
	}
	if len(payload) > maxDatagram {
		return fmt.Errorf("sqlite: publish %d bytes on %s: %w", len(payload), ch, store.ErrTooLarge)
	}
	return s.bus.publish(ch, payload)
}

// Subscribe binds a socket of its own in the bus directory and returns the
// payloads sent to it until ctx ends; then the socket is closed and its
// file removed.
func (s *Store) Subscribe(ctx context.Context, ch string) (<-chan []byte, error) {
	if err := knownChannel(ch); err != nil {
		return nil, err
	}
	dir := s.bus.dir()
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("sqlite: subscribe: create %s: %w", dir, err)
	}
	if err := privateDir(dir); err != nil {
		return nil, fmt.Errorf("sqlite: subscribe: %w", err)
	}
	var r [8]byte
	_, _ = rand.Read(r[:])
	path := filepath.Join(dir, ch+"-"+hex.EncodeToString(r[:])+".sock")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return nil, fmt.Errorf("sqlite: subscribe: socket: %w", err)
	}
	syscall.CloseOnExec(fd)
	err = syscall.Bind(fd, &syscall.SockaddrUnix{Name: path})
	if errors.Is(err, syscall.ENOENT) {
		// The last other subscription removed the empty directory between
		// our Mkdir and Bind: make it again, once.
		if err = os.Mkdir(dir, 0o700); err == nil || errors.Is(err, os.ErrExist) {
			if err = privateDir(dir); err == nil {
				err = syscall.Bind(fd, &syscall.SockaddrUnix{Name: path})
			}
		}
	}
	if err != nil {
		_ = syscall.Close(fd)
		return nil, fmt.Errorf("sqlite: subscribe: bind %s: %w", path, err)
	}
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, receiveBuffer) // best effort
	out := make(chan []byte, subscribeBuf)
	var closing atomic.Bool
	// The reader closes fd when it stops (woken below, or on an error of
	// its own); the closer shuts fd down only while it is still open, both
	// under fdMu. A number closed is at once free for this process's next
	// socket (an accepted connection of aos server, say), and a shutdown
	// through the stale number would cut that connection's reads.
	var fdMu sync.Mutex
	fdOpen := true // guarded by fdMu
	go func() {
		<-ctx.Done()
		closing.Store(true)
		// Connect the waker while the name still exists, then remove the
		// name (so publishers stop finding it), then wake the reader,
		// blocked in recvfrom, with an empty datagram; the shutdown also
		// wakes it on Linux.
		w, werr := dial(path)
		_ = os.Remove(path)
		tidyBusDir(dir) // the last subscription leaves no directory behind
		if werr == nil {
			_ = syscall.Sendto(w, nil, syscall.MSG_DONTWAIT, nil)
			_ = syscall.Close(w)
		}
		shutdown := func() {
			fdMu.Lock()
			defer fdMu.Unlock()
			if fdOpen {
				_ = syscall.Shutdown(fd, syscall.SHUT_RD)
			}
		}
		if hook := s.bus.aroundShutdown; hook != nil {
			hook(shutdown)
		} else {
			shutdown()
		}
	}()
	// The reader blocks in recvfrom on an OS thread of its own rather than
	// in Go's poller: the kernel then wakes it the moment a datagram
	// arrives, which keeps the short datagram queue (net.unix.max_dgram_qlen,
	// often 10) from filling under bursts.
	go func() {
		defer close(out)
		defer func() {
			fdMu.Lock()
			fdOpen = false
			_ = syscall.Close(fd)
			fdMu.Unlock()
		}()
		buf := make([]byte, maxDatagram+1)
		for {
			n, _, err := syscall.Recvfrom(fd, buf, 0)
			if closing.Load() {
				return
			}
			if err != nil {
				if errors.Is(err, syscall.EINTR) || errors.Is(err, syscall.EAGAIN) {
					continue
				}
				return
			}
			p := make([]byte, n)
			copy(p, buf[:n])
			select {
			case out <- p:
			default: // the reader is behind; drop rather than let the socket queue fill
			}
		}
	}()
	return out, nil
}

// dir is <db>.events, or a short private directory under os.TempDir when a
// socket path there would not fit in sockaddr_un.
func (b *bus) dir() string {
	d := b.dbPath + ".events"
	if len(d)+1+sockNameLen <= maxSockPath {
		return d
	}
	h := sha256.Sum256([]byte(b.dbPath))
	return filepath.Join(os.TempDir(), busDirPrefix+hex.EncodeToString(h[:8]))
}

func (b *bus) publish(ch string, payload []byte) error {
	dir := b.dir()
	if err := privateDir(dir); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil // nobody ever subscribed
		}
		return fmt.Errorf("sqlite: publish: %w", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("sqlite: publish: list %s: %w", dir, err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return errors.New("sqlite: publish: store closed")
	}
	live := make(map[string]bool, len(entries))
	var firstErr error
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, ch+"-") || !strings.HasSuffix(name, ".sock") {
			continue
		}
		path := filepath.Join(dir, name)
		live[path] = true
		if err := b.send(path, payload); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for path, p := range b.peers {
		if !live[path] && strings.HasPrefix(filepath.Base(path), ch+"-") {
			_ = syscall.Close(p.fd)
			delete(b.peers, path)
		}
	}
	if firstErr != nil {
		return fmt.Errorf("sqlite: publish: %w", firstErr)
	}
	return nil
}

// send delivers payload to the socket at path or drops it; it removes the
// file when nobody is bound to it any more. Called with mu held.
//
// A full queue (EAGAIN: net.unix.max_dgram_qlen, often only 10, datagrams
// are waiting, or the sending socket's buffer holds the datagrams the
// reader has not taken yet) is usually a reader about to wake up, so send
// retries over at most about 5 ms (this is the kernel's flusher goroutine,
// never a run). A subscriber that stays full is marked
// congested and costs one failed sendto per payload until it reads again.
func (b *bus) send(path string, payload []byte) error {
	p, ok := b.peers[path]
	if !ok {
		fd, err := dial(path)
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			b.removeStale(path)
			return nil
		case errors.Is(err, syscall.ENOENT):
			return nil // unsubscribed meanwhile
		case err != nil:
			return fmt.Errorf("connect %s: %w", path, err)
		}
		p = &peer{fd: fd}
		b.peers[path] = p
	}
	var err error
	for i := 0; ; i++ {
		err = syscall.Sendto(p.fd, payload, syscall.MSG_DONTWAIT, nil)
		full := errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.ENOBUFS)
		if !full || p.congested || i == sendRetries {
			break
		}
		if i == 0 {
			runtime.Gosched()
		} else {
			time.Sleep(sendRetryPause)
		}
	}
	switch {
	case err == nil:
		p.congested = false
		return nil
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.ENOBUFS):
		p.congested = true
		b.dropped.Add(1) // a slow or stopped subscriber
		return nil
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOTCONN), errors.Is(err, syscall.EPIPE):
		_ = syscall.Close(p.fd)
		delete(b.peers, path)
		b.removeStale(path)
		return nil
	default:
		_ = syscall.Close(p.fd)
		delete(b.peers, path)
		return fmt.Errorf("send to %s: %w", path, err)
	}
}

// removeStale removes a socket file whose process is gone, unless a live
// socket is bound to it after all (a race with nothing: names are random).
func (b *bus) removeStale(path string) {
	if err := os.Remove(path); err == nil {
		b.stale.Add(1)
	}
}

func (b *bus) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for path, p := range b.peers {
		_ = syscall.Close(p.fd)
		delete(b.peers, path)
	}
	b.closed = true
	tidyBusDir(b.dir())
}

// dial returns a non-blocking datagram socket connected to path.
func dial(path string) (int, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_DGRAM, 0)
	if err != nil {
		return -1, err
	}
	syscall.CloseOnExec(fd)
	if err := syscall.SetNonblock(fd, true); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		_ = syscall.Close(fd)
		return -1, err
	}
	return fd, nil
}

// privateDir checks that dir is a real directory of this user that no one
// else may enter: sockets in it receive what aos publishes, and anyone who
// can write into it can publish.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is not a private directory of this user (want mode 0700, owned by uid %d)", dir, os.Geteuid())
	}
	return nil
}

func knownChannel(ch string) error {
	if ch != store.ChannelEvents && ch != store.ChannelWork {
		return fmt.Errorf("sqlite: unknown notification channel %q", ch)
	}
	return nil
}
