package postgres_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestFirstPreparationEndsWithItsContext: a statement's first run
// prepares it, and PostgreSQL's parse analysis waits for the locks its
// tables are under. That wait ends with the caller's ctx, as the
// statement's own would (it was unbounded: a read of a locked table
// never returned, whatever its deadline). Once the lock is gone, the
// statement runs.
func TestFirstPreparationEndsWithItsContext(t *testing.T) {
	db := storetest.New(t, "postgres")
	bg := context.Background()
	tx := lockTable(t, db.DSN, "settings", "ACCESS EXCLUSIVE")
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(bg, 300*time.Millisecond)
		defer cancel()
		_, err := db.Store.GetSetting(ctx, "k")
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("read of a locked table: %v, want its context's deadline", err)
		}
	case <-time.After(10 * time.Second):
		// Let the stuck read end before the database is dropped.
		_ = tx.Rollback()
		<-done
		t.Fatal("read of a locked table with a 300 ms deadline still waiting after 10 s")
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Store.GetSetting(bg, "k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("read after the release: %v, want not found", err)
	}
}
