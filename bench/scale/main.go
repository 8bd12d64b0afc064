// Command scale measures what grows with history: it records one real
// mission of 20 turns (aos server and aos worker on the scripted model),
// copies what that mission wrote through the store's own inserts into
// N missions, and measures the API's reads and the database's size at
// each N, side by side in one run, as ratios to the smallest N. See
// README.md.
//
//	go run ./bench/scale -pg "$AOS_TEST_POSTGRES_URL"
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aos-run/aos/bench/internal/stack"
)

// scaleScript is a mission of 20 turns: 19 reads and listings, each with
// a little model text, then finish.
var scaleScript = func() string {
	var b strings.Builder
	b.WriteString("scripts:\n  - name: scale\n    turns:\n")
	for i := range 19 {
		tool := `{name: read_file, input: {path: calc.sh}}`
		if i%2 == 1 {
			tool = `{name: list_dir, input: {path: "."}}`
		}
		fmt.Fprintf(&b, "      - text: \"Turn %d: looking at the code once more before deciding what to change.\"\n        tool_calls: [%s]\n", i+1, tool)
	}
	b.WriteString("      - tool_calls:\n          - {name: finish, input: {status: partial, summary: \"read the code twenty times\", evidence: [], openQuestions: []}}\n")
	return b.String()
}()

type config struct {
	aos     string
	pg      string
	dbs     []string
	sizes   []int
	samples int
	par     int
	keep    bool
	explain bool
}

func main() {
	var c config
	var dbs, sizes string
	flag.StringVar(&c.aos, "aos", "", "the aos binary (default: built from this repository into a temp dir)")
	flag.StringVar(&c.pg, "pg", os.Getenv("AOS_TEST_POSTGRES_URL"), "PostgreSQL URL of a role that may CREATE DATABASE (empty: SQLite only)")
	flag.StringVar(&dbs, "db", "sqlite,postgres", "databases")
	flag.StringVar(&sizes, "n", "100,10000", "mission counts to measure at, ascending")
	flag.IntVar(&c.samples, "samples", 21, "requests per figure (the median is reported)")
	flag.IntVar(&c.par, "par", 4, "parallel writers of the generator")
	flag.BoolVar(&c.keep, "keep", false, "keep the data dir and logs")
	flag.BoolVar(&c.explain, "explain", true, "print the query plans of the measured reads at each size")
	flag.Parse()
	for _, d := range strings.Split(dbs, ",") {
		if d == "postgres" && c.pg == "" {
			fmt.Fprintln(os.Stderr, "scale: no -pg URL: PostgreSQL skipped")
			continue
		}
		c.dbs = append(c.dbs, d)
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || (len(c.sizes) > 0 && n <= c.sizes[len(c.sizes)-1]) {
			fatal(fmt.Errorf("bad -n %q: want ascending counts", sizes))
		}
		c.sizes = append(c.sizes, n)
	}
	ctx := context.Background()
	if c.aos == "" {
		dir, err := os.MkdirTemp("", "aos-scale-bin")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "scale: building aos")
		if c.aos, err = stack.BuildAOS(stack.RepoRoot(), dir); err != nil {
			fatal(err)
		}
	}
	for _, db := range c.dbs {
		start := time.Now()
		rows, err := run(ctx, c, db)
		if err != nil {
			fatal(fmt.Errorf("%s: %w", db, err))
		}
		printRows(os.Stdout, db, c.sizes, rows)
		fmt.Fprintf(os.Stderr, "scale: %s done in %s\n", db, time.Since(start).Round(time.Second))
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "scale:", err)
	os.Exit(1)
}
