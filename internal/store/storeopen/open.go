// Package storeopen picks and opens a store driver from configuration:
// a postgres:// URL selects PostgreSQL, anything else is a SQLite file path.
package storeopen

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/postgres"
	"github.com/aos-run/aos/internal/store/sqlite"
)

// IsPostgres reports whether dsn names a PostgreSQL database.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens dsn (a postgres:// URL or a SQLite file path) and migrates it.
func Open(ctx context.Context, dsn string) (store.Store, error) {
	var s store.Store
	var err error
	if IsPostgres(dsn) {
		s, err = postgres.Open(ctx, dsn)
	} else {
		s, err = sqlite.Open(ctx, dsn)
	}
	if err != nil {
		return nil, err
	}
	if err := s.Migrate(ctx); err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return s, nil
}

// DSN returns the database to use: databaseURL when set, else the SQLite
// file aos.db in dataDir.
func DSN(databaseURL, dataDir string) string {
	if databaseURL != "" {
		return databaseURL
	}
	return filepath.Join(dataDir, "aos.db")
}

// SchemaFingerprint identifies the PostgreSQL migrations' content, so test
// templates are rebuilt when the schema changes.
func SchemaFingerprint() string { return postgres.SchemaFingerprint() }
