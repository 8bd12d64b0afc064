// Package sqlstore holds the SQL that the SQLite and PostgreSQL drivers
// share. Both speak $N placeholders, RETURNING and ON CONFLICT, store times
// as Unix milliseconds and JSON as text, so one implementation serves both;
// what differs (the claim query, how events are ordered and announced, how a
// transaction begins, which errors are transient) is a Dialect.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/aos-run/aos/internal/store"
)

// Dialect is what a driver supplies to the shared implementation.
type Dialect struct {
	// Name is "sqlite" or "postgres".
	Name string
	// SkipLocked is appended to the claim's inner SELECT (PostgreSQL:
	// "FOR UPDATE SKIP LOCKED"; SQLite serializes writers and needs none).
	SkipLocked string
	// BeforeEvent runs in the same transaction before an event insert, to
	// keep event ids in commit order (PostgreSQL: a transaction-scoped
	// advisory lock). Empty for SQLite, whose single writer already does.
	BeforeEvent string
	// AfterEvent runs after an event insert (PostgreSQL: pg_notify, which
	// is delivered at commit). Empty for SQLite.
	AfterEvent string
	// Transient classifies passing errors.
	Transient func(error) bool
}

// DB is the shared implementation of store.Queries over database/sql, and of
// store.Store's transaction handling. Drivers embed it.
type DB struct {
	store.Queries // bound to the pool: each statement autocommits
	SQL           *sql.DB
	D             Dialect
}

// New wraps an open pool with the shared queries.
func New(db *sql.DB, d Dialect) *DB {
	out := &DB{SQL: db, D: d}
	out.Queries = &queries{q: db, d: &out.D}
	return out
}

// queries runs the store's statements on a *sql.DB or a *sql.Tx.
type queries struct {
	q interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
	d *Dialect
}

// Tx runs fn in one transaction.
func (db *DB) Tx(ctx context.Context, fn func(q store.Queries) error) error {
	tx, err := db.SQL.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	if err := fn(&queries{q: tx, d: &db.D}); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
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
