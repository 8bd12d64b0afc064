// Package storetest runs tests against every store driver on real databases:
// a SQLite file in the test's temp dir, and a fresh PostgreSQL database
// created from a migrated template on the cluster named by
// AOS_TEST_POSTGRES_URL. Without that variable the PostgreSQL subtests skip,
// unless AOS_TEST_REQUIRE_POSTGRES=1 (set by CI), when they fail.
package storetest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx" for the admin connection

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storeopen"
)

// Drivers returns the driver names every conformance test runs on.
func Drivers() []string { return []string{"sqlite", "postgres"} }

// DB is one fresh, migrated test database.
type DB struct {
	Store store.Store
	// DSN reopens the same database (from a child process, say).
	DSN    string
	Driver string
}

// Each runs fn as one subtest per driver, named "sqlite" and "postgres".
func Each(t *testing.T, fn func(t *testing.T, db DB)) {
	t.Helper()
	for _, d := range Drivers() {
		t.Run(d, func(t *testing.T) {
			fn(t, New(t, d))
		})
	}
}

// New creates a fresh migrated database for driver and closes and drops it
// when the test ends.
func New(t testing.TB, driver string) DB {
	t.Helper()
	ctx := context.Background()
	var dsn string
	switch driver {
	case "sqlite":
		dsn = filepath.Join(t.TempDir(), "aos.db")
	case "postgres":
		dsn = newPostgresDB(t)
	default:
		t.Fatalf("storetest: unknown driver %q", driver)
	}
	s, err := storeopen.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("storetest: open %s: %v", driver, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return DB{Store: s, DSN: dsn, Driver: driver}
}

// PostgresURL returns the test cluster's URL, skipping (or failing under
// AOS_TEST_REQUIRE_POSTGRES=1) when there is none.
func PostgresURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("AOS_TEST_POSTGRES_URL")
	if u == "" {
		if os.Getenv("AOS_TEST_REQUIRE_POSTGRES") == "1" {
			t.Fatal("storetest: AOS_TEST_REQUIRE_POSTGRES=1 but AOS_TEST_POSTGRES_URL is not set")
		}
		t.Skip("storetest: AOS_TEST_POSTGRES_URL not set; PostgreSQL subtests skipped")
	}
	return u
}

func newPostgresDB(t testing.TB) string {
	base := PostgresURL(t)
	ctx := context.Background()
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("storetest: admin connect: %v", err)
	}
	defer admin.Close()
	tmpl, err := ensureTemplate(ctx, admin, base)
	if err != nil {
		t.Fatalf("storetest: template: %v", err)
	}
	name := "t_" + randHex(8)
	if _, err := admin.ExecContext(ctx, fmt.Sprintf(`CREATE DATABASE %s TEMPLATE %s`, name, tmpl)); err != nil {
		t.Fatalf("storetest: create database: %v", err)
	}
	t.Cleanup(func() {
		a, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer a.Close()
		_, _ = a.ExecContext(context.Background(), fmt.Sprintf(`DROP DATABASE IF EXISTS %s WITH (FORCE)`, name))
	})
	return withDB(base, name)
}

// ensureTemplate creates, once per cluster and schema, a migrated template
// database, under an advisory lock so parallel test processes agree.
func ensureTemplate(ctx context.Context, admin *sql.DB, base string) (string, error) {
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock(7411)`); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock(7411)`) //nolint:errcheck // session ends anyway
	name := "aos_tmpl_" + schemaHash()
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	tmp := "tmpl_build_" + randHex(6)
	if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+tmp); err != nil {
		return "", err
	}
	s, err := storeopen.Open(ctx, withDB(base, tmp))
	if err != nil {
		return "", err
	}
	_ = s.Close()
	// Connections can linger in the pool briefly; retry the rename.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err = conn.ExecContext(ctx, fmt.Sprintf(`ALTER DATABASE %s RENAME TO %s`, tmp, name))
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return name, err
}

// schemaHash names the template after the migrations' content, so a schema
// change builds a new template instead of reusing a stale one.
func schemaHash() string {
	h := sha256.Sum256([]byte(storeopen.SchemaFingerprint()))
	return hex.EncodeToString(h[:])[:12]
}

func withDB(base, name string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	u.Path = "/" + name
	return u.String()
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
