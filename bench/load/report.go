package main

import (
	"fmt"
	"io"
	"time"
)

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

func report(w io.Writer, c config, rs []result) {
	fmt.Fprintf(w, "\n%d missions, %d creators, %d pollers (GET /missions?limit=1000 every %s), %d WebSocket clients from cursor 0\n\n",
		c.missions, c.creators, c.pollers, c.pollGap, c.sockets)
	fmt.Fprintln(w, "| build | db | runs | wall | create p50 | create p99 | GET /missions p50 | GET /missions p99 | GETs | errors (create/list/ws) | ws frames |")
	fmt.Fprintln(w, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %s | %d | %.1f s | %s | %s | %s | %s | %d | %d/%d/%d | %d |\n", r.label, r.db, r.runs, r.wall.Seconds(),
			ms(pct(r.create, .5)), ms(pct(r.create, .99)), ms(pct(r.list, .5)), ms(pct(r.list, .99)), len(r.list),
			r.createErrs, r.listErrs, r.wsErrs, r.wsFrames)
	}
	ratios(w, rs)
	for _, r := range rs {
		fmt.Fprintf(w, "%s %s/%d: missions ended %v\n", r.label, r.db, r.runs, r.statuses)
		for _, e := range r.firstErrors {
			fmt.Fprintf(w, "%s/%d: %s\n", r.db, r.runs, e)
		}
	}
}

// ratios prints after/before of the p99s per database and concurrency,
// pooling the rounds, when both builds ran.
func ratios(w io.Writer, rs []result) {
	type key struct {
		db   string
		runs int
	}
	pool := map[key]map[string]*result{}
	var keys []key
	for _, r := range rs {
		k := key{r.db, r.runs}
		if pool[k] == nil {
			pool[k] = map[string]*result{}
			keys = append(keys, k)
		}
		p := pool[k][r.label]
		if p == nil {
			p = &result{}
			pool[k][r.label] = p
		}
		p.create = append(p.create, r.create...)
		p.list = append(p.list, r.list...)
	}
	fmt.Fprintln(w, "\n| db | runs | create p99 before | after | ratio | GET /missions p99 before | after | ratio |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, k := range keys {
		b, a := pool[k]["before"], pool[k]["after"]
		if b == nil || a == nil {
			continue
		}
		cb, ca, lb, la := pct(b.create, .99), pct(a.create, .99), pct(b.list, .99), pct(a.list, .99)
		fmt.Fprintf(w, "| %s | %d | %s | %s | %.2f | %s | %s | %.2f |\n", k.db, k.runs, ms(cb), ms(ca), float64(ca)/float64(cb), ms(lb), ms(la), float64(la)/float64(lb))
	}
}
