package main

import (
	"context"
	"database/sql"
	"log/slog"
	"net/url"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	_ "github.com/dbos-inc/dbos-transact-golang/dbos/driver/sqlite" // DBOS's SQLite system database
)

// dbosSystem runs the workload on DBOS Transact Go: workflows started in
// this process with RunWorkflow, awaited with GetResult, which returns once
// the workflow's outcome is recorded.
type dbosSystem struct {
	ctx dbos.Context
	db  *sql.DB // the custom SQLite handle, if any; DBOS does not close it
}

// noopWorkflow runs n no-op steps.
func noopWorkflow(ctx dbos.Context, n int) (int, error) {
	for i := range n {
		if _, err := dbos.RunAsStep(ctx, func(context.Context) (int, error) { return i, nil }, dbos.WithStepName("s")); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// openDBOSPostgres launches DBOS on the PostgreSQL database at dbURL.
func openDBOSPostgres(ctx context.Context, dbURL string) (*dbosSystem, error) {
	return launchDBOS(ctx, dbos.Config{DatabaseURL: dbURL}, nil)
}

// openDBOSSQLite launches DBOS on a SQLite file. With synchronous set
// (FULL, say), DBOS gets its own connection settings but for that level:
// WAL, a busy timeout, immediate transactions and DBOS's pool of 8
// connections. With synchronous empty, DBOS opens the file itself with its
// defaults (synchronous=NORMAL).
func openDBOSSQLite(ctx context.Context, path, synchronous string) (*dbosSystem, error) {
	if synchronous == "" {
		return launchDBOS(ctx, dbos.Config{DatabaseURL: "sqlite:" + path}, nil)
	}
	q := url.Values{}
	for _, p := range []string{"busy_timeout(5000)", "foreign_keys(ON)", "journal_mode(WAL)", "synchronous(" + synchronous + ")"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(4)
	s, err := launchDBOS(ctx, dbos.Config{SQLiteSystemDB: db}, db)
	if err != nil {
		_ = db.Close()
	}
	return s, err
}

func launchDBOS(ctx context.Context, cfg dbos.Config, db *sql.DB) (*dbosSystem, error) {
	cfg.AppName = "aosbench"
	cfg.Logger = slog.New(slog.DiscardHandler)
	dctx, err := dbos.NewContext(ctx, cfg)
	if err != nil {
		return nil, err
	}
	dbos.RegisterWorkflow(dctx, noopWorkflow)
	if err := dbos.Launch(dctx); err != nil {
		_ = dbos.Shutdown(dctx, 5*time.Second)
		return nil, err
	}
	return &dbosSystem{ctx: dctx, db: db}, nil
}

// Run starts a workflow of n steps and waits for its recorded outcome.
func (s *dbosSystem) Run(_ context.Context, n int) error {
	h, err := dbos.RunWorkflow(s.ctx, noopWorkflow, n)
	if err != nil {
		return err
	}
	_, err = h.GetResult(dbos.WithHandleTimeout(runTimeout))
	return err
}

// Close shuts DBOS down.
func (s *dbosSystem) Close() error {
	err := dbos.Shutdown(s.ctx, 10*time.Second)
	if s.db != nil {
		_ = s.db.Close()
	}
	return err
}
