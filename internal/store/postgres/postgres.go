// Package postgres is the scale-out store driver: every server and worker on
// every machine points AOS_DATABASE_URL at one PostgreSQL, through pgx.
//
// Claims use FOR UPDATE SKIP LOCKED. Readers see events by position, not by
// id: ids are allocated in insert order, which is not commit order, so a
// cursor over ids could pass an event a slower transaction commits later.
// Positions are assigned after commit, in batches, by one sequencer at a
// time (see sqlstore.Dialect.Sequence), so writers never wait for each
// other's commits. Idle workers are woken by NOTIFY on aos_work when a run becomes
// claimable, with a slow poll behind it in case a notification is lost.
// Event readers poll (every 50 ms by default): a NOTIFY per event would take
// PostgreSQL's global notify lock in every step's commit, which measured as
// the largest limit on step throughput.
package postgres

import (
	"context"
	"crypto/sha256"
	"database/sql/driver"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Lock keys for pg_advisory_lock; arbitrary constants private to aos.
const (
	migrateLockKey = 0x616f736d // "aosm"
	eventLockKey   = 0x616f7365 // "aose"
)

// Store is a PostgreSQL-backed store.Store.
type Store struct {
	*sqlstore.DB
	url string
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at url (postgres://…). It does not migrate.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse url: %w", redact(err, url))
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("postgres: connect: %w", redact(err, url))
	}
	d := sqlstore.Dialect{
		Name:       "postgres",
		SkipLocked: "FOR UPDATE SKIP LOCKED",
		RowLock:    "FOR NO KEY UPDATE",
		EventPos:   "pos",
		// Positions are drawn in id order inside a materialized CTE: the
		// UPDATE's join may visit rows in heap order, which after a VACUUM
		// is not id order (TestEventsKeepInsertOrder).
		Sequence: fmt.Sprintf(`WITH lock AS (SELECT pg_try_advisory_xact_lock(%d) AS ok),
todo AS MATERIALIZED (SELECT id, nextval('event_pos_seq') AS p FROM
  (SELECT id FROM events WHERE pos IS NULL AND (SELECT ok FROM lock) ORDER BY id LIMIT 10000) ordered)
UPDATE events SET pos = todo.p FROM todo WHERE events.id = todo.id AND events.pos IS NULL`, eventLockKey),
		WritableCTE: true,
		HeldLeases:  `SELECT e->>0, (e->>1)::bigint FROM json_array_elements($3::json) e`,
		Transient:   transient,
	}
	return &Store{DB: sqlstore.New(db, d), url: url}, nil
}

// Dialect returns "postgres".
func (s *Store) Dialect() string { return "postgres" }

// SupportsListenNotify is true.
func (s *Store) SupportsListenNotify() bool { return true }

// Close closes the pool.
func (s *Store) Close() error { s.CloseStatements(); return s.SQL.Close() }

// Migrate applies the embedded migrations under a session advisory lock.
func (s *Store) Migrate(ctx context.Context) error {
	ms, err := sqlstore.LoadMigrations(migrations, "migrations")
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	conn, err := s.SQL.Conn(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migrate: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, migrateLockKey); err != nil {
		return fmt.Errorf("postgres: migration lock: %w", err)
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrateLockKey) //nolint:errcheck // the session ends with conn anyway
	if _, err := sqlstore.Apply(ctx, conn, ms, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// transient reports connection loss, a server shutting down or starting,
// and serialization failures: faults after which a retry may succeed.
func transient(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case strings.HasPrefix(pe.Code, "08"), // connection exception
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", // admin/crash shutdown, cannot connect now
			pe.Code == "40001", pe.Code == "40P01", // serialization failure, deadlock
			pe.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || pgconn.Timeout(err) {
		return true
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "conn closed") || strings.Contains(msg, "connection reset") || strings.Contains(msg, "broken pipe") ||
		strings.Contains(msg, "unexpected EOF") || strings.Contains(msg, "connection refused")
}

// redact removes the password of url from err's text, since pgx errors can
// quote the connection string.
func redact(err error, url string) error {
	cfg, perr := pgx.ParseConfig(url)
	if perr != nil || cfg.Password == "" {
		return err
	}
	msg := strings.ReplaceAll(err.Error(), cfg.Password, "xxxxx")
	return errors.New(msg)
}

// SchemaFingerprint hashes the embedded migrations.
func SchemaFingerprint() string {
	ms, err := sqlstore.LoadMigrations(migrations, "migrations")
	if err != nil {
		return "invalid"
	}
	h := sha256.New()
	for _, m := range ms {
		fmt.Fprintf(h, "%d\x00%s\x00", m.Version, m.SQL)
	}
	return hex.EncodeToString(h.Sum(nil))
}
