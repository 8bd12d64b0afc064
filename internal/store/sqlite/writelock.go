package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/aos-run/aos/internal/store"
)

// The write lock of several aos processes on one database (aos server
// beside aos worker, aos run beside aos up).
//
// SQLite lets one connection write at a time; another that begins a write
// transaction gets SQLITE_BUSY and its busy handler sleeps and retries on
// SQLite's own schedule, 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50 then 100
// ms. Against a worker that commits steps of 16 runs back to back, aos
// server's mission creation lost that race again and again and slept
// through the longer delays: p99 1.2 to 2.2 s for POST /missions in
// bench/load. So every transaction of the store (sqlstore.DB.Tx, through
// Dialect.Lock: the kernel's, and the shared code's own InsertMissionRun,
// ClaimStart and EndRun) first takes an exclusive flock on <db>.writelock,
// whose waiters the kernel wakes the moment it is released: a writer waits
// for the transactions ahead of it, never for a sleep. The worker's
// periodic autocommit writes (RenewLeases, UpsertWorker) take it too,
// around their one statement (underWriteLock). SQLite's own lock and
// busy_timeout stay underneath, for writers that are not aos transactions
// (the other autocommit statements, the sqlite3 shell).
//
// A released flock is not handed to a waiter: the kernel wakes the
// waiters and the first to run takes it. The process that just released
// it, with its next transaction already queued, is running and usually
// wins, so a worker committing the steps of 16 runs back to back kept
// aos server's creations waiting (p50 70 ms, p99 380 ms in bench/load).
// So a waiter first takes a second flock, the gate (<db>.writelock.gate),
// and holds it while it waits for the write lock, releasing it once it has
// the write lock: the holder's next transaction finds the gate taken and
// queues behind the waiter. Two busy processes thus alternate. Processes
// of an older aos, which never take the gate, still exclude each other
// through the write lock; they only skip the queue.
type writeLock struct {
	sem  chan struct{} // this process's turn: one transaction at a time (the pool has one connection)
	f    *os.File      // the write lock
	gate *os.File      // held while waiting for f
}

// ErrWriteLockTimeout is returned by Tx when another process held the
// write lock for longer than 10 s; it is transient, as SQLITE_BUSY is.
var ErrWriteLockTimeout = errors.New("sqlite: write lock wait timed out")

// lockWait bounds the wait for another process's transaction, as
// busy_timeout does for SQLite's lock.
const lockWait = 10 * time.Second

func openWriteLock(dbPath string) (*writeLock, error) {
	f, err := os.OpenFile(dbPath+".writelock", os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: write lock: %w", err)
	}
	gate, err := os.OpenFile(dbPath+".writelock.gate", os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("sqlite: write lock gate: %w", err)
	}
	return &writeLock{sem: make(chan struct{}, 1), f: f, gate: gate}, nil
}

// tryFlock takes f's exclusive flock if it is free; false when another
// holds it.
func tryFlock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unflock(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// lock waits for this process's turn, then for the file lock, behind the
// gate. It gives up when ctx ends or another process holds the file lock
// for lockWait.
func (l *writeLock) lock(ctx context.Context) (unlock func(), err error) {
	select {
	case l.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	release := func() {
		unflock(l.f)
		<-l.sem
	}
	// The fast way: nobody waits (the gate is free) and nobody writes.
	gated, err := tryFlock(l.gate)
	if err == nil && gated {
		var free bool
		if free, err = tryFlock(l.f); err == nil && free {
			unflock(l.gate)
			return release, nil
		}
	}
	if err != nil {
		if gated {
			unflock(l.gate)
		}
		<-l.sem
		return nil, fmt.Errorf("sqlite: write lock: %w", err)
	}
	// Another process writes, or waits: queue at the gate, then wait for
	// the write lock holding it, on a thread of its own, so that ctx and
	// the bound can still end the wait.
	got := make(chan error, 1)
	go func() {
		if !gated {
			if err := syscall.Flock(int(l.gate.Fd()), syscall.LOCK_EX); err != nil {
				got <- err
				return
			}
		}
		err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_EX)
		unflock(l.gate)
		got <- err
	}()
	t := time.NewTimer(lockWait)
	defer t.Stop()
	select {
	case err := <-got:
		if err != nil {
			<-l.sem
			return nil, fmt.Errorf("sqlite: write lock: %w", err)
		}
		return release, nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-t.C:
		err = fmt.Errorf("sqlite: another process held the write lock for %s: %w", lockWait, ErrWriteLockTimeout)
	}
	// Our turn stays taken until the abandoned flock returns, and is then
	// handed back, so no later transaction of ours starts under it.
	go func() {
		if <-got == nil {
			release()
			return
		}
		<-l.sem
	}()
	return nil, err
}

func (l *writeLock) close() {
	_ = l.f.Close()
	_ = l.gate.Close()
}

// InsertAudit appends an audit record in a transaction of its own, under
// the write lock (Tx takes it, Dialect.Lock): as a bare autocommit
// statement it met another process's transactions through SQLite's
// sleeping busy handler instead (up to half a second on mission creation
// under load in bench/load).
func (s *Store) InsertAudit(ctx context.Context, a store.AuditRecord) (id int64, err error) {
	err = s.Tx(ctx, func(q store.Queries) error {
		id, err = q.InsertAudit(ctx, a)
		return err
	})
	return id, err
}

// underWriteLock runs fn, one autocommit write statement, under the write
// lock, as Tx runs a transaction (but counts no commit of Tx's).
func underWriteLock[T any](ctx context.Context, s *Store, what string, fn func() (T, error)) (T, error) {
	unlock, err := s.wlock.lock(ctx)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("%s: %w", what, err)
	}
	defer unlock()
	return fn()
}

// RenewLeases renews a worker's leases under the write lock: as a bare
// autocommit statement, run every lease tick by every worker, it met
// another process's transactions through SQLite's sleeping busy handler.
func (s *Store) RenewLeases(ctx context.Context, p store.RenewLeasesParams) ([]store.RenewedLease, error) {
	if len(p.Held) == 0 {
		return nil, nil
	}
	return underWriteLock(ctx, s, "renew leases", func() ([]store.RenewedLease, error) { return s.DB.RenewLeases(ctx, p) })
}

// UpsertWorker writes a worker's row (its periodic heartbeat) under the
// write lock, for the same reason as RenewLeases.
func (s *Store) UpsertWorker(ctx context.Context, w store.Worker) error {
	_, err := underWriteLock(ctx, s, "upsert worker", func() (struct{}, error) { return struct{}{}, s.DB.UpsertWorker(ctx, w) })
	return err
}

// RenewAgentOperationLeases renews an aos server's preparation leases
// (every lease/3, on every server) under the write lock, for the same
// reason as RenewLeases.
func (s *Store) RenewAgentOperationLeases(ctx context.Context, owner string, leaseUntil int64) (int64, error) {
	return underWriteLock(ctx, s, "renew agent operation leases", func() (int64, error) {
		return s.DB.RenewAgentOperationLeases(ctx, owner, leaseUntil)
	})
}
