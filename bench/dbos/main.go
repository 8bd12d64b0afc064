// Command dbos-bench runs one workload, workflows of N no-op steps, on aos
// (SQLite and PostgreSQL) and on DBOS Transact Go (PostgreSQL and SQLite), in
// one process, and prints per-step overhead, throughput under concurrency,
// the databases' single-commit floors, and the ratios of aos to DBOS.
//
//	go run . -pg postgres://user@127.0.0.1:5432/postgres
//
// It is a separate module so that DBOS never enters aos's go.mod. See
// README.md.
package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" for the admin connection and the floor table
)

// Names of the -diag variants whose runs are always queued and claimed.
const (
	aosQueuedSQLite = "aos sqlite (diag: queued, then claimed)"
	aosQueuedPG     = "aos postgres (diag: queued, then claimed)"
)

// runTimeout bounds the wait for one workflow.
const runTimeout = time.Minute

// system runs workflows of n no-op steps, returning once the outcome is
// durable.
type system interface {
	Run(ctx context.Context, n int) error
	Close() error
}

type config struct {
	pg      string
	pgbench string
	steps   int
	iters   int
	dur     time.Duration
	conc    []int
	rounds  int
	sqlSync string
	diag    bool
}

func main() {
	var c config
	var conc string
	flag.StringVar(&c.pg, "pg", os.Getenv("AOS_TEST_POSTGRES_URL"), "PostgreSQL cluster URL (a database on it is created and dropped per system); empty skips PostgreSQL")
	flag.StringVar(&c.pgbench, "pgbench", "/usr/lib/postgresql/15/bin/pgbench", "pgbench binary, for the PostgreSQL floor")
	flag.IntVar(&c.steps, "steps", 10, "N, the no-op steps per workflow")
	flag.IntVar(&c.iters, "iters", 40, "sequential (0-step, N-step) workflow pairs per system and round")
	flag.DurationVar(&c.dur, "dur", 3*time.Second, "throughput measuring time per system, concurrency and round")
	flag.StringVar(&conc, "conc", "8,32", "concurrent workflows for throughput, comma-separated")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds; each figure is the median over rounds, systems interleaved within each")
	flag.StringVar(&c.sqlSync, "sqlite-sync", "FULL", "SQLite synchronous level for DBOS, matched to aos's (FULL)")
	flag.BoolVar(&c.diag, "diag", false, "also run diagnostic aos variants (runs always queued then claimed, as without a local hand-off; on PostgreSQL no event-order lock, no NOTIFY per event), print aos's transactions and claim attempts per step, and time aos's 0-step runs by phase")
	flag.Parse()
	for _, f := range strings.Split(conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			fmt.Fprintf(os.Stderr, "bad -conc %q\n", conc)
			os.Exit(2)
		}
		c.conc = append(c.conc, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "dbos-bench:", err)
		os.Exit(1)
	}
}

// entry is one system under test and its figures, one per round.
type entry struct {
	name string
	// seq runs the sequential phase (per-step, 0-step); sys the
	// throughput phases. Each has its own database, so the sequential
	// figures of every system are taken on a database holding only that
	// phase's runs: a system faster in the throughput phases would
	// otherwise time its 0-step runs on a database several times larger
	// (and with more to checkpoint) than the others'.
	seq     system
	sys     system
	perStep []time.Duration
	run0    []time.Duration
	// zeros is every sequential 0-step run's time, of all rounds.
	zeros []time.Duration
	runN  []time.Duration
	tput  map[int][]float64 // concurrency → steps/s
	// For systems that count (aos): transactions and claim attempts per
	// step during the throughput runs, by concurrency.
	txPerStep, claimsPerStep map[int][]float64
}

// resizer is a system with a worker to size to the load (aos).
type resizer interface {
	Resize(concurrency int) error
}

func resize(name string, s system, n int) error {
	if r, ok := s.(resizer); ok {
		if err := r.Resize(n); err != nil {
			return fmt.Errorf("%s: resize worker: %w", name, err)
		}
	}
	return nil
}

// phaseTimer is a system that times 0-step runs by phase (aos, -diag).
type phaseTimer interface {
	TimePhases(on bool)
	ReportPhases(w io.Writer, name string)
}

// counter is a system that counts its transactions and claim attempts.
type counter interface {
	Counts() (txs, claims int64)
}

func run(ctx context.Context, c config, w io.Writer) (err error) {
	dir, err := os.MkdirTemp("", "aos-dbos-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	maxConc := slices.Max(c.conc) // until each phase sizes aos's worker to its load

	var entries []*entry
	var dropLater []func() // databases to drop once the systems are closed
	defer func() {
		for _, e := range entries {
			for _, s := range []system{e.seq, e.sys} {
				if s == nil {
					continue
				}
				if cerr := s.Close(); cerr != nil && err == nil {
					err = fmt.Errorf("close %s: %w", e.name, cerr)
				}
			}
		}
		for _, drop := range dropLater {
			drop()
		}
	}()
	// add opens a system twice through open (tag "seq", then "tput":
	// distinct databases) and adds it.
	add := func(name string, open func(tag string) (system, error)) error {
		e := &entry{name: name, tput: map[int][]float64{}, txPerStep: map[int][]float64{}, claimsPerStep: map[int][]float64{}}
		entries = append(entries, e)
		var err error
		if e.seq, err = open("seq"); err != nil {
			return fmt.Errorf("open %s: %w", name, err)
		}
		if e.sys, err = open("tput"); err != nil {
			return fmt.Errorf("open %s: %w", name, err)
		}
		return nil
	}
	sqliteAOS := func(base string, v aosVariant) func(string) (system, error) {
		return func(tag string) (system, error) {
			return openAOS(ctx, filepath.Join(dir, base+"-"+tag+".db"), filepath.Join(dir, base+"-"+tag+"-data"), maxConc, v)
		}
	}
	if err := add("aos sqlite", sqliteAOS("aos", aosVariant{phases: c.diag})); err != nil {
		return err
	}
	if err := add("aos sqlite (commit every step)", sqliteAOS("aos-every", aosVariant{every: true})); err != nil {
		return err
	}
	if c.diag {
		// The path a creation takes without a local worker's free slot:
		// queued, then claimed after the worker's wake-up (as before the
		// hand-off). Interleaved with the others, it is the "before".
		if err := add(aosQueuedSQLite, sqliteAOS("aos-queued", aosVariant{queue: true, phases: true})); err != nil {
			return err
		}
	}
	sqliteDBOS := func(base, sync string) func(string) (system, error) {
		return func(tag string) (system, error) {
			return openDBOSSQLite(ctx, filepath.Join(dir, base+"-"+tag+".db"), sync)
		}
	}
	if err := add("dbos sqlite ("+c.sqlSync+")", sqliteDBOS("dbos-sync", c.sqlSync)); err != nil {
		return err
	}
	if err := add("dbos sqlite (its default, NORMAL)", sqliteDBOS("dbos-default", "")); err != nil {
		return err
	}

	var aosPG string // the database pgbench's floor runs in
	if c.pg != "" {
		admin, err := sql.Open("pgx", c.pg)
		if err != nil {
			return err
		}
		dropLater = append(dropLater, func() { _ = admin.Close() })
		// newDB creates a database dropped at the end (before admin.Close,
		// which was queued first: prepended).
		newDB := func(prefix string) (string, error) {
			u, err := createDB(ctx, admin, c.pg, prefix)
			if err != nil {
				return "", err
			}
			dropLater = append([]func(){func() { dropDB(admin, u) }}, dropLater...)
			return u, nil
		}
		if aosPG, err = newDB("pgfloor"); err != nil {
			return err
		}
		pgAOS := func(prefix string, v aosVariant) func(string) (system, error) {
			return func(tag string) (system, error) {
				u, err := newDB(prefix + tag)
				if err != nil {
					return nil, err
				}
				return openAOS(ctx, u, filepath.Join(dir, prefix+"-"+tag+"-data"), maxConc, v)
			}
		}
		if err := add("aos postgres", pgAOS("aosbench", aosVariant{phases: c.diag})); err != nil {
			return err
		}
		if err := add("aos postgres (commit every step)", pgAOS("aosevery", aosVariant{every: true})); err != nil {
			return err
		}
		if c.diag {
			if err := add(aosQueuedPG, pgAOS("aosqueued", aosVariant{queue: true, phases: true})); err != nil {
				return err
			}
		}
		if err := add("dbos postgres", func(tag string) (system, error) {
			u, err := newDB("dbosbench" + tag)
			if err != nil {
				return nil, err
			}
			return openDBOSPostgres(ctx, u)
		}); err != nil {
			return err
		}
	}

	for _, e := range entries { // warm up: connections, caches, first claim
		for _, s := range []system{e.seq, e.sys} {
			if err := s.Run(ctx, c.steps); err != nil {
				return fmt.Errorf("%s: warm-up: %w", e.name, err)
			}
		}
	}
	floorRounds := map[string][]time.Duration{}
	for r := range c.rounds {
		fmt.Fprintf(os.Stderr, "round %d/%d\n", r+1, c.rounds)
		for _, lvl := range slices.Compact([]string{c.sqlSync, "NORMAL"}) {
			f, err := sqliteFloor(ctx, dir, lvl, time.Second)
			if err != nil {
				return err
			}
			k := "sqlite commit (WAL, " + lvl + ")"
			floorRounds[k] = append(floorRounds[k], f)
		}
		if aosPG != "" {
			f, err := pgbenchFloor(ctx, c.pgbench, aosPG, 2*time.Second)
			if err != nil {
				return err
			}
			k := "postgres single-row insert (pgbench -c1)"
			floorRounds[k] = append(floorRounds[k], f)
		}
		// The sequential phase interleaves the systems run by run: timed one
		// after the other, the system timed first after the floors and the
		// throughput phases (which leave WAL, checkpoints and dirty pages
		// behind) was the slowest of its round more often than not, and
		// that was always aos on SQLite.
		for _, e := range entries {
			if err := resize(e.name, e.seq, 1); err != nil {
				return err
			}
			// One untimed run first: a worker just started (a new
			// PostgreSQL LISTEN connection, its first claim) made the
			// first timed run of each round aos's slowest by 10-40 ms, a
			// cost DBOS, which starts nothing here, never pays.
			if err := e.seq.Run(ctx, 0); err != nil {
				return fmt.Errorf("%s: sequential warm-up: %w", e.name, err)
			}
		}
		// Dirty pages the previous phases left (the throughput phases,
		// DBOS's NORMAL mode writes without fsync) are written back now,
		// not in the first timed fsyncs.
		syscall.Sync()
		if err := sequential(ctx, entries, c.steps, c.iters, uint64(r)); err != nil {
			return err
		}
		order := slices.Concat(entries[r*len(entries)/c.rounds:], entries[:r*len(entries)/c.rounds])
		for _, n := range c.conc {
			for _, e := range order {
				if err := resize(e.name, e.sys, n); err != nil {
					return err
				}
				cnt, counts := e.sys.(counter)
				var tx0, cl0 int64
				if counts {
					tx0, cl0 = cnt.Counts()
				}
				sps, steps, err := throughput(ctx, e.sys, c.steps, n, c.dur)
				if err != nil {
					return fmt.Errorf("%s: throughput c%d: %w", e.name, n, err)
				}
				e.tput[n] = append(e.tput[n], sps)
				if counts && steps > 0 {
					tx1, cl1 := cnt.Counts()
					e.txPerStep[n] = append(e.txPerStep[n], float64(tx1-tx0)/float64(steps))
					e.claimsPerStep[n] = append(e.claimsPerStep[n], float64(cl1-cl0)/float64(steps))
				}
				fmt.Fprintf(os.Stderr, "  %-36s c%-3d %.0f steps/s\n", e.name, n, sps)
			}
		}
	}

	floors := map[string]time.Duration{}
	for k, v := range floorRounds {
		floors[k] = medianDur(v)
	}
	report(w, c, entries, floors)
	return nil
}

// sequential times iters pairs of a 0-step and an n-step workflow on each
// entry's sequential system, interleaved: pair i runs every system once, in
// an order drawn afresh for each i, so that every system follows every
// other about as often (what a system leaves behind, such as DBOS's work
// after a workflow returns, lands on whichever runs next). Each entry gets
// the round's (mean n-step − mean 0-step) / n, both means, and every 0-step
// run's time. seed fixes the orders.
func sequential(ctx context.Context, entries []*entry, n, iters int, seed uint64) error {
	d0 := make([]time.Duration, len(entries))
	dN := make([]time.Duration, len(entries))
	for _, e := range entries {
		if pt, ok := e.seq.(phaseTimer); ok {
			pt.TimePhases(true)
			defer pt.TimePhases(false)
		}
	}
	rng := mrand.New(mrand.NewPCG(seed, 0))
	for range iters {
		for _, k := range rng.Perm(len(entries)) {
			e := entries[k]
			t0 := time.Now()
			if err := e.seq.Run(ctx, 0); err != nil {
				return fmt.Errorf("%s: sequential: %w", e.name, err)
			}
			t1 := time.Now()
			if err := e.seq.Run(ctx, n); err != nil {
				return fmt.Errorf("%s: sequential: %w", e.name, err)
			}
			d0[k] += t1.Sub(t0)
			dN[k] += time.Since(t1)
			e.zeros = append(e.zeros, t1.Sub(t0))
		}
	}
	for k, e := range entries {
		run0, runN := d0[k]/time.Duration(iters), dN[k]/time.Duration(iters)
		ps := (runN - run0) / time.Duration(n)
		e.perStep, e.run0, e.runN = append(e.perStep, ps), append(e.run0, run0), append(e.runN, runN)
		fmt.Fprintf(os.Stderr, "  %-36s per-step %s  0-step %s\n", e.name, ms(ps), ms(run0))
	}
	return nil
}

// throughput runs c clients, each starting an n-step workflow and waiting
// for it, over and over for d, and returns steps per second (workflows
// finished × n over the time until the last one finished) and the steps.
func throughput(ctx context.Context, s system, n, c int, d time.Duration) (float64, int64, error) {
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, c)
	t0 := time.Now()
	deadline := t0.Add(d)
	for range c {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if err := s.Run(ctx, n); err != nil {
					errs <- err
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(t0)
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, err
	}
	steps := done.Load() * int64(n)
	return float64(steps) / elapsed.Seconds(), steps, nil
}

func createDB(ctx context.Context, admin *sql.DB, base, prefix string) (string, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := prefix + "_" + hex.EncodeToString(b[:])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", fmt.Errorf("create database %s: %w", name, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func dropDB(admin *sql.DB, dbURL string) {
	u, err := url.Parse(dbURL)
	if err != nil {
		return
	}
	_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+strings.TrimPrefix(u.Path, "/")+" WITH (FORCE)")
}

func medianDur(xs []time.Duration) time.Duration {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianF(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.3f ms", float64(d.Nanoseconds())/1e6) }

func report(w io.Writer, c config, entries []*entry, floors map[string]time.Duration) {
	fmt.Fprintf(w, "\nWorkflows of %d no-op steps; medians of %d rounds (%d sequential pairs, %s per throughput point).\n\n", c.steps, c.rounds, c.iters, c.dur)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "system\tper-step\t0-step wf\t" + strconv.Itoa(c.steps) + "-step wf\t"
	for _, n := range c.conc {
		head += fmt.Sprintf("c%d steps/s\t", n)
	}
	fmt.Fprintln(tw, head)
	byName := map[string]*entry{}
	for _, e := range entries {
		byName[e.name] = e
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t", e.name, ms(medianDur(e.perStep)), ms(medianDur(e.run0)), ms(medianDur(e.runN)))
		for _, n := range c.conc {
			line += fmt.Sprintf("%.0f\t", medianF(e.tput[n]))
		}
		fmt.Fprintln(tw, line)
	}
	_ = tw.Flush()

	fmt.Fprintln(w, "\nFloors:")
	names := make([]string, 0, len(floors))
	for k := range floors {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		fmt.Fprintf(w, "  %-42s %s\n", k, ms(floors[k]))
	}

	fmt.Fprintln(w, "\nRatios aos/DBOS (per-step: lower is better for aos; throughput: higher is better for aos):")
	pairs := [][2]string{
		{"aos sqlite", "dbos sqlite (" + c.sqlSync + ")"},
		{"aos sqlite", "dbos sqlite (its default, NORMAL)"},
		{"aos sqlite (commit every step)", "dbos sqlite (" + c.sqlSync + ")"},
		{"aos postgres", "dbos postgres"},
		{"aos postgres (commit every step)", "dbos postgres"},
		{aosQueuedSQLite, "dbos sqlite (" + c.sqlSync + ")"},
		{aosQueuedPG, "dbos postgres"},
	}
	for _, p := range pairs {
		a, d := byName[p[0]], byName[p[1]]
		if a == nil || d == nil {
			continue
		}
		line := fmt.Sprintf("  %-41s / %-34s per-step %.2f   0-step %.2f", p[0], p[1], float64(medianDur(a.perStep))/float64(medianDur(d.perStep)),
			float64(medianDur(a.run0))/float64(medianDur(d.run0)))
		for _, n := range c.conc {
			line += fmt.Sprintf("   c%d %.2f", n, medianF(a.tput[n])/medianF(d.tput[n]))
		}
		fmt.Fprintln(w, line)
	}

	fmt.Fprintln(w, "\n0-step runs, each (all rounds), ms: the table's 0-step figure is the median of the rounds' means")
	for _, e := range entries {
		z := slices.Clone(e.zeros)
		slices.Sort(z)
		if len(z) == 0 {
			continue
		}
		at := func(q float64) string { return ms(z[min(len(z)-1, int(q*float64(len(z))))]) }
		fmt.Fprintf(w, "  %-42s p50 %s  p90 %s  p99 %s  max %s  (%d runs)\n", e.name, at(0.5), at(0.9), at(0.99), ms(z[len(z)-1]), len(z))
	}

	fmt.Fprintln(w, "\naos's work per step under concurrency (transactions incl. run create/claim/end; claim statements, store.ClaimStart, incl. those finding nothing):")
	for _, e := range entries {
		for _, n := range c.conc {
			if len(e.txPerStep[n]) == 0 {
				continue
			}
			fmt.Fprintf(w, "  %-42s c%-3d %.2f tx/step  %.2f claims/step\n", e.name, n, medianF(e.txPerStep[n]), medianF(e.claimsPerStep[n]))
		}
	}

	if c.diag {
		fmt.Fprintln(w, "\naos 0-step run by phase, medians over the sequential runs of all rounds, ms (-diag; phases.go says what each covers):")
		for _, e := range entries {
			if pt, ok := e.seq.(phaseTimer); ok {
				pt.ReportPhases(w, e.name)
			}
		}
	}

	fmt.Fprintln(w, "\nPer-step overhead / the database's single-commit floor:")
	floorOf := map[string]string{
		"aos sqlite":                        "sqlite commit (WAL, FULL)", // aos's level, fixed by its driver
		"dbos sqlite (" + c.sqlSync + ")":   "sqlite commit (WAL, " + c.sqlSync + ")",
		"dbos sqlite (its default, NORMAL)": "sqlite commit (WAL, NORMAL)",
		"aos sqlite (commit every step)":    "sqlite commit (WAL, FULL)",
		"aos postgres":                      "postgres single-row insert (pgbench -c1)",
		"aos postgres (commit every step)":  "postgres single-row insert (pgbench -c1)",
		"dbos postgres":                     "postgres single-row insert (pgbench -c1)",
	}
	for _, e := range entries {
		f, ok := floors[floorOf[e.name]]
		if !ok || f <= 0 {
			continue
		}
		fmt.Fprintf(w, "  %-36s %.1f× %s\n", e.name, float64(medianDur(e.perStep))/float64(f), floorOf[e.name])
	}
}
