package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	_ "modernc.org/sqlite" // the SQLite floor uses the driver aos and DBOS use
)

// pgbenchFloor runs pgbench with one client inserting one row per
// transaction into a fresh table of the database at dbURL for d, and returns
// its average latency.
func pgbenchFloor(ctx context.Context, pgbench, dbURL string, d time.Duration) (time.Duration, error) {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS bench_floor (id bigserial PRIMARY KEY, v int)`); err != nil {
		return 0, fmt.Errorf("pgbench floor table: %w", err)
	}
	script, err := os.CreateTemp("", "floor-*.sql")
	if err != nil {
		return 0, err
	}
	defer os.Remove(script.Name())
	if _, err := script.WriteString("INSERT INTO bench_floor (v) VALUES (1);\n"); err != nil {
		return 0, err
	}
	if err := script.Close(); err != nil {
		return 0, err
	}
	secs := max(1, int(d.Seconds()))
	out, err := exec.CommandContext(ctx, pgbench, "-n", "-c", "1", "-T", strconv.Itoa(secs), "-f", script.Name(), dbURL).CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("pgbench: %w: %s", err, out)
	}
	m := regexp.MustCompile(`latency average = ([0-9.]+) ms`).FindSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench: no latency in output: %s", out)
	}
	ms, err := strconv.ParseFloat(string(m[1]), 64)
	if err != nil {
		return 0, err
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

// sqliteFloor commits single-row INSERTs, one per transaction, to a fresh
// SQLite file in dir in WAL mode at the given synchronous level for d, and
// returns the mean commit latency.
func sqliteFloor(ctx context.Context, dir, synchronous string, d time.Duration) (time.Duration, error) {
	q := url.Values{}
	for _, p := range []string{"busy_timeout(5000)", "journal_mode(WAL)", "synchronous(" + synchronous + ")"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	path := filepath.Join(dir, "floor-"+synchronous+".db")
	_ = os.Remove(path) // a fresh file each round
	_ = os.Remove(path + "-wal")
	_ = os.Remove(path + "-shm")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE floor (id INTEGER PRIMARY KEY, v INTEGER)`); err != nil {
		return 0, fmt.Errorf("sqlite floor table: %w", err)
	}
	n := 0
	t0 := time.Now()
	for time.Since(t0) < d {
		if _, err := db.ExecContext(ctx, `INSERT INTO floor (v) VALUES (1)`); err != nil {
			return 0, fmt.Errorf("sqlite floor insert: %w", err)
		}
		n++
	}
	return time.Since(t0) / time.Duration(n), nil
}
