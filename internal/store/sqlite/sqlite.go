// Package sqlite is the embedded store driver: one SQLite file in WAL mode,
// through the pure-Go modernc.org/sqlite driver (no cgo).
//
// Connection settings, and why:
//   - journal_mode=WAL: readers never block the writer, and a commit is one
//     append to the WAL.
//   - synchronous=FULL: every commit fsyncs the WAL. A committed step
//     survives kill -9 (which any mode would give) and also power loss,
//     provided the disk honours fsync. NORMAL could lose the last commits on
//     power loss, and a lost intent row would let a non_idempotent effect
//     run twice, which is the one thing aos promises never to do.
//   - busy_timeout=10000: another process (aos run beside aos up) holding
//     the write lock makes us wait up to 10 s instead of failing.
//   - _txlock=immediate: every transaction takes the write lock at BEGIN,
//     so two writers never deadlock upgrading a read lock.
//   - foreign_keys=ON.
//   - Pool size 1 for writes: SQLite has one writer at a time. Handing the single
//     connection over inside Go is a fast, fair handoff, where several
//     connections would contend through SQLite's sleeping busy handler.
//     Transactions hold no I/O but their own statements and the commit.
//     The reads that serve the API use a read-only pool (reads.go).
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"

	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a SQLite-backed store.Store.
type Store struct {
	*sqlstore.DB
	path  string
	bus   *bus
	reads *sqlstore.DB // the read-only pool of reads.go
	wlock *writeLock   // see writelock.go
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the database file at path. It does not
// migrate; call Migrate.
func Open(ctx context.Context, path string) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: resolve %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: create data dir: %w", err)
	}
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(ON)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	dsn := "file:" + abs + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open: %w", err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	reads, err := openReads(ctx, abs)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	wlock, err := openWriteLock(abs)
	if err != nil {
		_ = reads.SQL.Close()
		_ = db.Close()
		return nil, err
	}
	// Directories of dead processes' sockets under TMPDIR go now: nothing
	// of aos accumulates outside the data dir (bus_sweep.go).
	sweepStaleBusDirs(os.TempDir())
	return &Store{DB: sqlstore.New(db, sqlstore.Dialect{Name: "sqlite", EventPos: "id", Transient: transient, Lock: wlock.lock,
		HeldLeases: `SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each($3)`}), path: abs, bus: newBus(abs), reads: reads, wlock: wlock}, nil
}

// Path returns the database file's absolute path.
func (s *Store) Path() string { return s.path }

// Dialect returns "sqlite".
func (s *Store) Dialect() string { return "sqlite" }

// SupportsListenNotify is false: notifications go by unix datagrams to
// the processes of this machine, not through a database server.
func (s *Store) SupportsListenNotify() bool { return false }

// Doorbell rings shortly after a Publish on ch by any process on this
// database, through the same unix datagram sockets as Subscribe, so an
// idle `aos worker` claims a mission `aos server` created at once instead
// of at its next poll. The bell only shortens waits: if the socket cannot
// be bound, it never rings and readers keep polling. The channel is closed
// when ctx ends.
func (s *Store) Doorbell(ctx context.Context, ch string) (<-chan struct{}, error) {
	if err := knownChannel(ch); err != nil {
		return nil, err
	}
	out := make(chan struct{}, 1)
	sub, err := s.Subscribe(ctx, ch)
	go func() {
		defer close(out)
		if err == nil {
			for range sub {
				select {
				case out <- struct{}{}:
				default:
				}
			}
		}
		<-ctx.Done() // never close early: a closed bell would ring forever
	}()
	return out, nil
}

// Close closes the database and the socket Publish sends from.
func (s *Store) Close() error {
	s.bus.close()
	s.CloseStatements()
	s.reads.CloseStatements()
	_ = s.reads.SQL.Close()
	s.wlock.close()
	return s.SQL.Close()
}

// Migrate applies the embedded migrations while holding an exclusive file
// lock beside the database, each in an IMMEDIATE transaction.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := sqlstore.LoadMigrations(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	lock, err := os.OpenFile(s.path+".migrate.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("sqlite: migration lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("sqlite: migration lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing releases it anyway
	conn, err := s.SQL.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: migrate: %w", err)
	}
	defer conn.Close()
	if _, err := sqlstore.Apply(ctx, conn, ms, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("sqlite: %w", err)
	}
	return nil
}

func transient(err error) bool {
	if errors.Is(err, ErrWriteLockTimeout) {
		return true
	}
	var se *msqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return true
		}
	}
	return false
}
