package postgres_test

import (
	"context"
	"database/sql"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx", for the locking session
)

// lockTable holds table in mode from another session of the database at
// dsn until the returned transaction is rolled back (at the test's end at
// the latest).
func lockTable(t *testing.T, dsn, table, mode string) *sql.Tx {
	t.Helper()
	bg := context.Background()
	locker, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = locker.Close() })
	tx, err := locker.BeginTx(bg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if _, err := tx.ExecContext(bg, "LOCK TABLE "+table+" IN "+mode+" MODE"); err != nil {
		t.Fatal(err)
	}
	return tx
}
