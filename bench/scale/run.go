package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/jackc/pgx/v5"

	"github.com/aos-run/aos/bench/internal/stack"
	"github.com/aos-run/aos/internal/store"
	"github.com/aos-run/aos/internal/store/postgres"
	"github.com/aos-run/aos/internal/store/sqlite"
	"github.com/aos-run/aos/internal/store/storeopen"
)

// figure names, in the order printed.
var figureNames = []string{"GET /missions", "GET /missions?status=failed&limit=10", "GET /runs/{id}/steps", "events replay from 0 (1 mission)", "aos mission ls", "bytes per mission", "replay dial failures (retried)"}

type figures map[string]float64 // ms, or bytes for "bytes per mission"

type bench struct {
	c    config
	st   *stack.Stack
	s    store.Store
	tpl  *template
	mid  string
	run  string
	plan io.Writer
}

func run(ctx context.Context, c config, db string) ([]figures, error) {
	st, err := stack.Start(ctx, stack.Options{Aos: c.aos, DB: db, PG: c.pg, Script: scaleScript, Runs: 1, Keep: c.keep})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	b := &bench{c: c, st: st, plan: os.Stdout}
	if b.mid, err = b.recordTemplate(ctx); err != nil {
		return nil, err
	}
	dsn := st.DBURL
	if dsn == "" {
		dsn = filepath.Join(st.DataDir, "aos.db")
	}
	// Opened without migrating: the schema is the one the aos under test
	// made (an older binary's, with -aos, for a before/after of the plans).
	if b.s, err = openStore(ctx, dsn); err != nil {
		return nil, err
	}
	defer b.s.Close()
	if b.tpl, err = readTemplate(ctx, b.s, b.mid); err != nil {
		return nil, err
	}
	b.run = b.tpl.mission.RootRunID
	fmt.Fprintf(os.Stderr, "scale: %s: the recorded mission wrote %d runs, %d steps, %d events, %d audit records\n",
		db, len(b.tpl.runs), b.tpl.stepCount(), len(b.tpl.events), len(b.tpl.audit))
	var out []figures
	have := 1
	for _, n := range c.sizes {
		t0 := time.Now()
		// Copies are older than the recorded mission, one a minute.
		if err := b.tpl.generate(ctx, b.s, have-1, n-1, func(i int) int64 { return b.tpl.mission.CreatedAt - int64(i+1)*60_000 }, c.par); err != nil {
			return nil, err
		}
		if err := b.sequenceAll(ctx, db); err != nil {
			return nil, err
		}
		fmt.Fprintf(os.Stderr, "scale: %s: %d missions written in %s\n", db, n-have, time.Since(t0).Round(time.Millisecond))
		have = n
		f, err := b.measure(ctx, db, n)
		if err != nil {
			return nil, err
		}
		if c.explain {
			if err := b.explain(ctx, db, n); err != nil {
				return nil, err
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// client drops connections idle for 30 s, well before the server's 120 s
// idle timeout, so that a request after a long generation never reuses
// one the server is closing.
var client = &http.Client{Transport: &http.Transport{IdleConnTimeout: 30 * time.Second, MaxIdleConnsPerHost: 4}}

func (b *bench) get(ctx context.Context, path string) (time.Duration, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", b.st.Base+path, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+b.st.Token)
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %d %.200s", path, resp.StatusCode, body)
	}
	return d, body, err
}

// recordTemplate runs one real mission of scaleScript to its end.
func (b *bench) recordTemplate(ctx context.Context) (string, error) {
	body := `{"objective":"read the code","criteria":["it is read"],"workspace":"repo","model":"script:scale","budgetUsd":5,"maxTurns":40}`
	req, _ := http.NewRequestWithContext(ctx, "POST", b.st.Base+"/missions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+b.st.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	var m struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	err = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusCreated {
		return "", fmt.Errorf("create the recorded mission: %d %v", resp.StatusCode, err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		_, body, err := b.get(ctx, "/missions/"+m.ID)
		if err != nil {
			return "", err
		}
		_ = json.Unmarshal(body, &m)
		if m.Status == "partial" {
			return m.ID, nil
		}
		if m.Status == "failed" || m.Status == "blocked" || m.Status == "cancelled" || m.Status == "budget_exhausted" || m.Status == "done" {
			return "", fmt.Errorf("the recorded mission ended %s, want partial (see the logs in %s with -keep)", m.Status, b.st.Root)
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("the recorded mission is still %s after 3 minutes", m.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func median(ds []time.Duration) float64 {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return float64(ds[len(ds)/2]) / float64(time.Millisecond)
}

func (b *bench) sample(ctx context.Context, fn func() (time.Duration, error)) (float64, error) {
	if _, err := fn(); err != nil { // warm: caches, prepared statements
		return 0, err
	}
	var ds []time.Duration
	for range b.c.samples {
		d, err := fn()
		if err != nil {
			return 0, err
		}
		ds = append(ds, d)
	}
	return median(ds), nil
}

func (b *bench) measure(ctx context.Context, db string, n int) (figures, error) {
	f := figures{}
	gets := map[string]string{"GET /missions": "/missions", "GET /missions?status=failed&limit=10": "/missions?status=failed&limit=10",
		"GET /runs/{id}/steps": "/runs/" + b.run + "/steps"}
	for name, path := range gets {
		v, err := b.sample(ctx, func() (time.Duration, error) { d, _, err := b.get(ctx, path); return d, err })
		if err != nil {
			return nil, err
		}
		f[name] = v
	}
	// A replay that fails is retried (up to 3 times) and counted, each
	// failure printed with its close status and the server log's tail. On
	// SQLite, until the bus fix of internal/store/sqlite/bus.go, about one
	// replay in a hundred failed (EOF on the handshake, 1001 or EOF after a
	// few events): a closing event subscription of the server shut down
	// the descriptor of the next accepted connection.
	failures := 0
	v, err := b.sample(ctx, func() (time.Duration, error) {
		for try := 0; ; try++ {
			d, err := b.replay(ctx)
			if err == nil || try == 2 {
				return d, err
			}
			failures++
			fmt.Fprintf(os.Stderr, "scale: %s, %d missions: replay failed, retrying: %s\nserver log, last lines:\n%s", db, n, describe(err), b.serverLogTail(20))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("%s (server log, last lines:\n%s)", describe(err), b.serverLogTail(40))
	}
	f["replay dial failures (retried)"] = float64(failures)
	f["events replay from 0 (1 mission)"] = v
	v, err = b.sample(ctx, func() (time.Duration, error) {
		cmd := exec.CommandContext(ctx, b.c.aos, "mission", "ls")
		cmd.Env = append(append([]string(nil), b.st.Env...), "AOS_SERVER=http://"+b.st.Addr, "AOS_TOKEN="+b.st.Token)
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			return 0, fmt.Errorf("aos mission ls: %w: %.300s", err, out)
		}
		return time.Since(t0), nil
	})
	if err != nil {
		return nil, err
	}
	f["aos mission ls"] = v
	size, err := b.dbSize(ctx, db)
	if err != nil {
		return nil, err
	}
	f["bytes per mission"] = float64(size) / float64(n)
	return f, nil
}

// describe spells out a replay's failure: the error, and the close status
// and reason when the server closed the socket.
func describe(err error) string {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Sprintf("%v [closed by the server: status %d (%s), reason %q]", err, int(ce.Code), ce.Code, ce.Reason)
	}
	return fmt.Sprintf("%v [no close frame]", err)
}

// serverLogTail is the last n lines of aos server's log.
func (b *bench) serverLogTail(n int) string {
	log, err := os.ReadFile(filepath.Join(b.st.Root, "server.log"))
	if err != nil {
		return "(" + err.Error() + ")\n"
	}
	lines := strings.SplitAfter(string(log), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if s := strings.Join(lines, ""); strings.TrimSpace(s) != "" {
		return s
	}
	return "(empty)\n"
}

// replay reads one mission's events from cursor 0 over the WebSocket,
// until the last one the recorded mission wrote.
func (b *bench) replay(ctx context.Context) (time.Duration, error) {
	want := len(b.tpl.events)
	u := strings.Replace(b.st.Base, "http://", "ws://", 1) + "/events?cursor=0&missionId=" + b.mid
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	t0 := time.Now()
	// A fresh connection per dial: a kept-alive one may have sat idle
	// through a long generation and been closed by the server meanwhile.
	// (net/http sends no "Connection: close" on an upgrade request, so
	// DisableKeepAlives does not spoil the handshake.)
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + b.st.Token}},
		HTTPClient: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}})
	if err != nil {
		return 0, fmt.Errorf("events: %w", err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 22)
	got := 0
	for got < want {
		_, msg, err := c.Read(ctx)
		if err != nil {
			return 0, fmt.Errorf("events: %d of %d replayed: %w", got, want, err)
		}
		var e struct {
			ID int64 `json:"id"`
		}
		if json.Unmarshal(msg, &e) == nil && e.ID > 0 {
			got++
		}
	}
	return time.Since(t0), nil
}

// dbSize is the database's size on disk: the SQLite file after a
// checkpoint, or pg_database_size.
func (b *bench) dbSize(ctx context.Context, db string) (int64, error) {
	if db == "postgres" {
		conn, err := pgx.Connect(ctx, b.st.DBURL)
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "VACUUM ANALYZE"); err != nil {
			return 0, err
		}
		var n int64
		err = conn.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n)
		return n, err
	}
	s := b.s.(*sqlite.Store)
	if _, err := s.SQL.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return 0, err
	}
	if _, err := s.SQL.ExecContext(ctx, "ANALYZE"); err != nil {
		return 0, err
	}
	fi, err := os.Stat(s.Path())
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// The reads measured above, as the store runs them (columns elided).
func (b *bench) planQueries() [][2]string {
	return [][2]string{
		{"GET /missions", "SELECT * FROM missions ORDER BY created_at DESC, id LIMIT 100"},
		{"GET /missions?status=failed&limit=10", "SELECT * FROM missions WHERE status = 'failed' ORDER BY created_at DESC, id LIMIT 10"},
		{"GET /runs/{id}/steps", "SELECT * FROM steps WHERE run_id = '" + b.run + "' AND seq > -1 ORDER BY seq LIMIT 1000"},
		{"events of a mission (SQLite: id; PostgreSQL: pos)", "SELECT * FROM events WHERE mission_id = '" + b.mid + "' AND %POS% > 0 ORDER BY %POS% LIMIT 1000"},
	}
}

func (b *bench) explain(ctx context.Context, db string, n int) error {
	fmt.Fprintf(b.plan, "\n#### %s, %d missions: query plans\n\n```\n", db, n)
	defer fmt.Fprint(b.plan, "```\n")
	for _, pq := range b.planQueries() {
		fmt.Fprintf(b.plan, "-- %s\n", pq[0])
		if db == "postgres" {
			conn, err := pgx.Connect(ctx, b.st.DBURL)
			if err != nil {
				return err
			}
			rows, err := conn.Query(ctx, "EXPLAIN (ANALYZE, COSTS OFF) "+strings.ReplaceAll(pq[1], "%POS%", "pos"))
			if err != nil {
				conn.Close(ctx)
				return err
			}
			for rows.Next() {
				var line string
				_ = rows.Scan(&line)
				fmt.Fprintln(b.plan, line)
			}
			rows.Close()
			conn.Close(ctx)
			continue
		}
		s := b.s.(*sqlite.Store)
		rows, err := s.SQL.QueryContext(ctx, "EXPLAIN QUERY PLAN "+strings.ReplaceAll(pq[1], "%POS%", "id"))
		if err != nil {
			return err
		}
		for rows.Next() {
			var id, parent, notused int
			var detail string
			_ = rows.Scan(&id, &parent, &notused, &detail)
			fmt.Fprintln(b.plan, detail)
		}
		rows.Close()
	}
	return nil
}

func printRows(w io.Writer, db string, sizes []int, fs []figures) {
	fmt.Fprintf(w, "\n| %s | ", db)
	for _, n := range sizes {
		fmt.Fprintf(w, "%d missions | ", n)
	}
	fmt.Fprintf(w, "ratio %d/%d |\n|---|", sizes[len(sizes)-1], sizes[0])
	for range sizes {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w, "---:|")
	for _, name := range figureNames {
		fmt.Fprintf(w, "| %s | ", name)
		for _, f := range fs {
			if name == "bytes per mission" {
				fmt.Fprintf(w, "%.0f B | ", f[name])
			} else if strings.HasPrefix(name, "replay dial failures") {
				fmt.Fprintf(w, "%.0f | ", f[name])
			} else {
				fmt.Fprintf(w, "%.2f ms | ", f[name])
			}
		}
		fmt.Fprintf(w, "%.2f× |\n", fs[len(fs)-1][name]/fs[0][name])
	}
}

func openStore(ctx context.Context, dsn string) (store.Store, error) {
	if storeopen.IsPostgres(dsn) {
		return postgres.Open(ctx, dsn)
	}
	return sqlite.Open(ctx, dsn)
}

// sequenceAll gives every generated event its cursor position. On
// PostgreSQL positions are assigned after commit by the next reader, at
// most 10,000 per read (docs/STORAGE.md); during real runs a reader (the
// server's event listener, a worker) keeps up as events commit, but the
// generator writes 1.45 million at once, and the first measured replays
// would pay for sequencing them. Then it vacuums, as autovacuum would
// soon after such a burst: the 1.45 million position updates leave dead
// entries in the partial index of unsequenced events (events_unsequenced),
// which every reader's sequencing statement would otherwise walk (45 ms
// per replay at 10,000 missions until autovacuum ran).
func (b *bench) sequenceAll(ctx context.Context, db string) error {
	if db != "postgres" {
		return nil
	}
	conn, err := pgx.Connect(ctx, b.st.DBURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for {
		var left int64
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM events WHERE pos IS NULL").Scan(&left); err != nil {
			return err
		}
		if left == 0 {
			_, err := conn.Exec(ctx, "VACUUM ANALYZE events")
			return err
		}
		if _, err := b.s.ListEvents(ctx, store.ListEventsParams{After: 1 << 62, Limit: 1}); err != nil {
			return err
		}
	}
}
