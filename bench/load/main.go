// Command load drives a real `aos server` and `aos worker` (on SQLite or
// PostgreSQL, with the scripted model server as the model) with missions
// through the HTTP API, as many clients would at once: C creators POST
// /missions, P pollers GET /missions, W WebSocket clients follow every
// event from cursor 0, while the worker runs R missions at a time. It
// reports the latency percentiles of mission creation and of GET
// /missions, and every error. See README.md.
//
//	go run ./bench/load -pg "$AOS_TEST_POSTGRES_URL"
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

type config struct {
	aos      string
	before   string
	rounds   int
	pg       string
	dbs      []string
	runs     []int
	missions int
	creators int
	pollers  int
	sockets  int
	pollGap  time.Duration
	keep     bool
}

func main() {
	var c config
	var dbs, runs string
	flag.StringVar(&c.aos, "aos", "", "the aos binary (default: built from this repository into a temp dir)")
	flag.StringVar(&c.before, "before", "", "another aos binary (an older build) to load side by side, interleaved, for a before/after ratio")
	flag.IntVar(&c.rounds, "rounds", 1, "rounds of every scenario (with -before: each round runs before, then after)")
	flag.StringVar(&c.pg, "pg", os.Getenv("AOS_TEST_POSTGRES_URL"), "PostgreSQL URL of a role that may CREATE DATABASE (empty: SQLite only)")
	flag.StringVar(&dbs, "db", "sqlite,postgres", "databases to load")
	flag.StringVar(&runs, "runs", "4,16", "worker concurrencies (AOS_MAX_CONCURRENT_RUNS) to load at")
	flag.IntVar(&c.missions, "missions", 100, "missions created per scenario")
	flag.IntVar(&c.creators, "creators", 10, "parallel creators")
	flag.IntVar(&c.pollers, "pollers", 5, "parallel GET /missions pollers")
	flag.IntVar(&c.sockets, "ws", 20, "WebSocket clients following every event")
	flag.DurationVar(&c.pollGap, "poll-gap", 50*time.Millisecond, "pause between one poller's requests")
	flag.BoolVar(&c.keep, "keep", false, "keep each scenario's data dir and logs")
	flag.Parse()
	for _, d := range strings.Split(dbs, ",") {
		if d == "postgres" && c.pg == "" {
			fmt.Fprintln(os.Stderr, "load: no -pg URL: PostgreSQL skipped")
			continue
		}
		c.dbs = append(c.dbs, d)
	}
	for _, r := range strings.Split(runs, ",") {
		n, err := strconv.Atoi(r)
		if err != nil || n < 1 {
			fatal(fmt.Errorf("bad -runs %q", runs))
		}
		c.runs = append(c.runs, n)
	}
	ctx := context.Background()
	if c.aos == "" {
		dir, err := os.MkdirTemp("", "aos-load-bin")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, "load: building aos")
		if c.aos, err = stack.BuildAOS(stack.RepoRoot(), dir); err != nil {
			fatal(err)
		}
	}
	bins := []struct{ label, path string }{{"after", c.aos}}
	if c.before != "" {
		bins = []struct{ label, path string }{{"before", c.before}, {"after", c.aos}}
	}
	var results []result
	for round := range c.rounds {
		for _, db := range c.dbs {
			for _, r := range c.runs {
				for _, b := range bins {
					fmt.Fprintf(os.Stderr, "load: round %d, %s, %s, %d concurrent runs, %d missions\n", round+1, b.label, db, r, c.missions)
					cc := c
					cc.aos = b.path
					res, err := scenario(ctx, cc, db, r)
					if err != nil {
						fatal(fmt.Errorf("%s %s at %d runs: %w", b.label, db, r, err))
					}
					res.label = b.label
					results = append(results, res)
				}
			}
		}
	}
	report(os.Stdout, c, results)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "load:", err)
	os.Exit(1)
}
