package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/bench/internal/stack"
)

// loadScript is the scripted model's mission: reads, a listing, and a
// finish, no effect that asks the owner (so nothing waits on a person).
const loadScript = `scripts:
  - name: load
    turns:
      - tool_calls: [{name: read_file, input: {path: calc.sh}}]
      - tool_calls: [{name: list_dir, input: {path: "."}}]
      - tool_calls: [{name: read_file, input: {path: test.sh}}]
      - tool_calls:
          - {name: finish, input: {status: partial, summary: "read the code", evidence: [], openQuestions: []}}
`

// result is one scenario's measurements.
type result struct {
	label       string // which binary: "before" or "after"
	db          string
	runs        int
	wall        time.Duration
	create      []time.Duration
	list        []time.Duration
	createErrs  int64
	listErrs    int64
	wsErrs      int64
	wsFrames    int64
	notEnded    int
	statuses    map[string]int
	firstErrors []string
}

// terminal mission statuses.
var terminal = map[string]bool{"done": true, "partial": true, "blocked": true, "failed": true, "budget_exhausted": true, "cancelled": true}

func scenario(ctx context.Context, c config, db string, runs int) (result, error) {
	res := result{db: db, runs: runs}
	st, err := stack.Start(ctx, stack.Options{Aos: c.aos, DB: db, PG: c.pg, Script: loadScript, Runs: runs, Keep: c.keep})
	if err != nil {
		return res, err
	}
	defer st.Close()
	if c.keep {
		fmt.Fprintln(os.Stderr, "load: data in", st.Root)
	}
	l := &loader{c: c, base: st.Base, token: st.Token, res: &res}
	err = l.run(ctx)
	return res, err
}

// loader is one scenario's clients.
type loader struct {
	c     config
	base  string
	token string
	res   *result

	mu     sync.Mutex
	errs   []string
	create []time.Duration
	list   []time.Duration
}

func (l *loader) fail(what string, n *int64, err error) {
	atomic.AddInt64(n, 1)
	l.mu.Lock()
	if len(l.errs) < 5 {
		l.errs = append(l.errs, what+": "+err.Error())
	}
	l.mu.Unlock()
}

func (l *loader) do(ctx context.Context, method, path string, body any) (int, []byte, time.Duration, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, l.base+path, rd)
	if err != nil {
		return 0, nil, 0, err
	}
	req.Header.Set("Authorization", "Bearer "+l.token)
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, time.Since(start), err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, b, time.Since(start), err
}

func (l *loader) run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	wsCtx, stopWS := context.WithCancel(ctx)
	var wsWG sync.WaitGroup
	for range l.c.sockets {
		wsWG.Add(1)
		go func() { defer wsWG.Done(); l.follow(wsCtx) }()
	}
	start := time.Now()
	var next atomic.Int64
	var created sync.Map
	var cwg sync.WaitGroup
	for range l.c.creators {
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			for next.Add(1) <= int64(l.c.missions) {
				body := map[string]any{"objective": "read the code", "criteria": []string{"it is read"}, "workspace": "repo",
					"model": "script:load", "budgetUsd": 1, "maxTurns": 20}
				code, b, d, err := l.do(ctx, "POST", "/missions", body)
				if err == nil && code != http.StatusCreated {
					err = fmt.Errorf("status %d: %.200s", code, b)
				}
				if err != nil {
					l.fail("create", &l.res.createErrs, err)
					continue
				}
				var m struct {
					ID string `json:"id"`
				}
				_ = json.Unmarshal(b, &m)
				created.Store(m.ID, true)
				l.mu.Lock()
				l.create = append(l.create, d)
				l.mu.Unlock()
			}
		}()
	}
	creatorsDone := make(chan struct{})
	go func() { cwg.Wait(); close(creatorsDone) }()
	var allEnded atomic.Bool
	var notEnded atomic.Int64
	var pwg sync.WaitGroup
	for i := range l.c.pollers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			for ctx.Err() == nil && !allEnded.Load() {
				code, b, d, err := l.do(ctx, "GET", "/missions?limit=1000", nil)
				if err == nil && code != http.StatusOK {
					err = fmt.Errorf("status %d: %.200s", code, b)
				}
				if err != nil {
					if ctx.Err() == nil {
						l.fail("list", &l.res.listErrs, err)
					}
				} else {
					l.mu.Lock()
					l.list = append(l.list, d)
					l.mu.Unlock()
					if i == 0 {
						select {
						case <-creatorsDone:
							var ms []struct {
								ID     string `json:"id"`
								Status string `json:"status"`
							}
							_ = json.Unmarshal(b, &ms)
							n, st := 0, map[string]int{}
							for _, m := range ms {
								if _, ok := created.Load(m.ID); ok {
									st[m.Status]++
									if !terminal[m.Status] {
										n++
									}
								}
							}
							notEnded.Store(int64(n))
							if n == 0 {
								l.mu.Lock()
								l.res.statuses = st
								l.mu.Unlock()
								allEnded.Store(true)
							}
						default:
						}
					}
				}
				select {
				case <-ctx.Done():
				case <-time.After(l.c.pollGap):
				}
			}
		}()
	}
	pwg.Wait()
	l.res.wall = time.Since(start)
	stopWS()
	wsWG.Wait()
	l.res.notEnded = int(notEnded.Load())
	l.res.create, l.res.list, l.res.firstErrors = l.create, l.list, l.errs
	if !allEnded.Load() {
		return fmt.Errorf("%d missions had not ended after 15 minutes (first errors: %s)", notEnded.Load(), strings.Join(l.errs, "; "))
	}
	return nil
}

// follow keeps one WebSocket on the events from cursor 0, reconnecting
// (from the last id seen) after anything but the end of the load.
func (l *loader) follow(ctx context.Context) {
	cursor := int64(0)
	for ctx.Err() == nil {
		u := strings.Replace(l.base, "http://", "ws://", 1) + "/events?cursor=" + url.QueryEscape(fmt.Sprint(cursor))
		c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + l.token}}})
		if err != nil {
			if ctx.Err() == nil {
				l.fail("ws dial", &l.res.wsErrs, err)
				time.Sleep(100 * time.Millisecond)
			}
			continue
		}
		c.SetReadLimit(1 << 22)
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				if ctx.Err() == nil {
					l.fail("ws read", &l.res.wsErrs, err)
				}
				break
			}
			atomic.AddInt64(&l.res.wsFrames, 1)
			var e struct {
				ID int64 `json:"id"`
			}
			if json.Unmarshal(b, &e) == nil && e.ID > cursor {
				cursor = e.ID
			}
		}
		_ = c.CloseNow()
	}
}

func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p*float64(len(s))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(s) {
		i = len(s) - 1
	}
	return s[i]
}
