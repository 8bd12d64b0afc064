// Package sqlstore holds the SQL that the SQLite and PostgreSQL drivers
// share. Both speak $N placeholders, RETURNING and ON CONFLICT, store times
// as Unix milliseconds and JSON as text, so one implementation serves both;
// what differs (the claim query, how events are ordered, how a
// transaction begins, which errors are transient) is a Dialect.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/aos-run/aos/internal/store"
)

// Dialect is what a driver supplies to the shared implementation.
type Dialect struct {
	// Name is "sqlite" or "postgres".
	Name string
	// SkipLocked is appended to the claim's inner SELECT (PostgreSQL:
	// "FOR UPDATE SKIP LOCKED"; SQLite serializes writers and needs none).
	SkipLocked string
	// RowLock is appended to the fencing check's SELECT (PostgreSQL:
	// "FOR NO KEY UPDATE"; SQLite's immediate transaction already holds
	// the database's write lock).
	RowLock string
	// EventPos is the column readers order events by and use as the
	// cursor: "id" on SQLite, whose single writer commits ids in order;
	// "pos" on PostgreSQL, assigned after commit by Sequence.
	EventPos string
	// Sequence, when set, is one statement run before reading events: it
	// gives every committed event without a position the next positions,
	// under a transaction-scoped try-lock so that one sequencer runs at a
	// time. Positions are therefore handed out in batches that become
	// visible atomically and in order, and a reader's cursor never passes
	// an event that commits later, while writers commit concurrently. The
	// statement's snapshot predates its lock, so the UPDATE itself must
	// re-check that a row still has no position (READ COMMITTED re-evaluates
	// its WHERE on rows a previous sequencer changed), or an event could be
	// given a second position and be delivered twice.
	Sequence string
	// HeldLeases is a subquery yielding (run id, fencing token) rows from
	// $3, a JSON array of [id, token] pairs: RenewLeases matches a worker's
	// leases against it in one statement whatever their number.
	HeldLeases string
	// WritableCTE says that a statement's WITH clause may insert and
	// update (PostgreSQL), so several writes go in one statement and one
	// round trip.
	WritableCTE bool
	// Transient classifies passing errors.
	Transient func(error) bool
	// Lock, when set, is taken before every transaction of Tx begins and
	// released after its commit or rollback: SQLite's cross-process write
	// lock (sqlite/writelock.go). Every transaction of the shared code
	// (InsertMissionRun, ClaimStart, EndRun and the kernel's own) then
	// waits in the same queue, instead of meeting the others in SQLite's
	// sleeping busy handler.
	Lock func(ctx context.Context) (unlock func(), err error)
}

// DB is the shared implementation of store.Queries over database/sql, and of
// store.Store's transaction handling. Drivers embed it.
type DB struct {
	store.Queries // bound to the pool: each statement autocommits
	SQL           *sql.DB
	D             Dialect
	stmts         *stmtCache
	commits       atomic.Uint64 // transactions committed by Tx
}

// Commits returns how many transactions Tx has committed on this store
// since it was opened (statements that autocommit outside Tx are not
// counted). Tests and benchmarks read it to count a workload's commits,
// each an fsync on SQLite at synchronous=FULL.
func (db *DB) Commits() uint64 { return db.commits.Load() }

// New wraps an open pool with the shared queries.
func New(db *sql.DB, d Dialect) *DB {
	ctx, cancel := context.WithCancel(context.Background())
	out := &DB{SQL: db, D: d, stmts: &stmtCache{db: db, m: map[string]*sql.Stmt{}, pending: map[string]bool{}, bg: ctx, stop: cancel}}
	out.Queries = &queries{q: &prepared{c: out.stmts}, d: &out.D}
	return out
}

// stmtCache prepares each distinct statement once per pool, so that SQLite
// does not parse it on every call (pgx caches statements itself, so on
// PostgreSQL this mostly saves a map lookup in the driver).
type stmtCache struct {
	db *sql.DB
	// bg bounds the background preparations; stop (close) ends them.
	bg   context.Context
	stop context.CancelFunc

	mu      sync.Mutex
	m       map[string]*sql.Stmt // guarded by mu
	pending map[string]bool      // being prepared in the background; guarded by mu
	closed  bool                 // guarded by mu
}

// maxCachedStmts bounds the cache; queries built with variable filters
// beyond it run unprepared.
const maxCachedStmts = 256

// get returns the prepared statement for query, or nil to run it
// unprepared. Inside a transaction (inTx) a miss never prepares on the
// pool, which may have no other connection (SQLite has one): the statement
// is prepared in the background once the pool has a free connection.
func (c *stmtCache) get(ctx context.Context, query string, inTx bool) (*sql.Stmt, error) {
	c.mu.Lock()
	if st, ok := c.m[query]; ok {
		c.mu.Unlock()
		return st, nil
	}
	if c.closed || c.pending[query] || len(c.m)+len(c.pending) >= maxCachedStmts {
		c.mu.Unlock()
		return nil, nil
	}
	c.pending[query] = true
	c.mu.Unlock()
	if inTx {
		go c.prepare(c.bg, query)
		return nil, nil
	}
	// Never hold mu while preparing: preparing waits for a free connection,
	// and on PostgreSQL for the locks the statement's tables are under
	// (parse analysis takes them): a miss prepares under the caller's ctx,
	// which bounds that wait as it bounds the statement's own.
	if err := c.prepare(ctx, query); err != nil && ctx.Err() != nil {
		return nil, fmt.Errorf("prepare statement: %w", context.Cause(ctx))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[query], nil
}

// prepare prepares query on the pool and caches it. Its error is ctx's, or
// one the statement meets again when it runs unprepared (a later miss
// tries again).
func (c *stmtCache) prepare(ctx context.Context, query string) error {
	st, err := c.db.PrepareContext(ctx, query)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.pending, query)
	if err != nil {
		return err
	}
	if c.closed {
		_ = st.Close()
		return nil
	}
	c.m[query] = st
	return nil
}

func (c *stmtCache) close() {
	c.stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, st := range c.m {
		_ = st.Close()
	}
	c.m = map[string]*sql.Stmt{}
}

// prepared runs statements through the cache, on the pool or in tx.
type prepared struct {
	c  *stmtCache
	tx *sql.Tx // nil: the pool
}

func (p *prepared) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	st, err := p.c.get(ctx, query, p.tx != nil)
	if err != nil || st == nil {
		return nil, err
	}
	if p.tx != nil {
		return p.tx.StmtContext(ctx, st), nil
	}
	return st, nil
}

func (p *prepared) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		if p.tx != nil {
			return p.tx.ExecContext(ctx, query, args...)
		}
		return p.c.db.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

func (p *prepared) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := p.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if st == nil {
		if p.tx != nil {
			return p.tx.QueryContext(ctx, query, args...)
		}
		return p.c.db.QueryContext(ctx, query, args...)
	}
	return st.QueryContext(ctx, args...)
}

func (p *prepared) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := p.stmt(ctx, query)
	if err != nil || st == nil {
		if p.tx != nil { // a failed prepare surfaces from the query itself
			return p.tx.QueryRowContext(ctx, query, args...)
		}
		return p.c.db.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// CloseStatements closes the prepared statements; drivers call it before
// closing the pool.
func (db *DB) CloseStatements() { db.stmts.close() }

// queries runs the store's statements on a *sql.DB or a *sql.Tx.
type queries struct {
	q interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
	d *Dialect
}

// Tx runs fn in one transaction, holding the dialect's Lock if it has one.
func (db *DB) Tx(ctx context.Context, fn func(q store.Queries) error) error {
	if db.D.Lock != nil {
		unlock, err := db.D.Lock(ctx)
		if err != nil {
			return fmt.Errorf("store: begin: %w", err)
		}
		defer unlock()
	}
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(&queries{q: &prepared{c: db.stmts, tx: tx}, d: &db.D}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	db.commits.Add(1)
	return nil
}

// Ping checks the connection.
func (db *DB) Ping(ctx context.Context) error { return db.SQL.PingContext(ctx) }

// IsTransient reports whether err is a passing fault.
func (db *DB) IsTransient(err error) bool {
	if err == nil || errors.Is(err, store.ErrFenced) || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrConflict) {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return db.D.Transient != nil && db.D.Transient(err)
}

func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// nullJSON turns an empty raw message into SQL NULL.
func nullJSON(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// rawJSON turns a nullable text column into a raw message.
func rawJSON(s sql.NullString) []byte {
	if !s.Valid {
		return nil
	}
	return []byte(s.String)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
