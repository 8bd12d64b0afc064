// Command memory measures the peak resident memory of a real `aos worker`
// running M missions at once whose tool calls print large outputs (10 MB
// each by default), beside the same worker running the same missions with
// small outputs: the peer that isolates what the outputs cost. The goal is
// < 200 MiB for 4 missions of 10 MB outputs. See README.md.
//
//	go run ./bench/memory
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aos-run/aos/bench/internal/stack"
)

// script: each turn prints `bytes` bytes of base64 text (one line per 76
// characters) through the sandboxed shell, three times, then finishes.
func script(bytes int) string {
	raw := bytes * 3 / 4 // base64 grows 4/3
	cmd := fmt.Sprintf("head -c %d /dev/urandom | base64", raw)
	var b strings.Builder
	b.WriteString("scripts:\n  - name: big\n    turns:\n")
	for range 3 {
		fmt.Fprintf(&b, "      - tool_calls: [{name: shell, input: {command: %q, timeoutSec: 120}}]\n", cmd)
	}
	b.WriteString("      - tool_calls:\n          - {name: finish, input: {status: partial, summary: \"printed\", evidence: [], openQuestions: []}}\n")
	return b.String()
}

func main() {
	aos := flag.String("aos", "", "the aos binary (default: built from this repository)")
	missions := flag.Int("missions", 4, "missions run at once")
	size := flag.Int("bytes", 10<<20, "bytes each tool call prints")
	small := flag.Int("small", 1<<10, "bytes each tool call prints in the peer run")
	flag.Parse()
	ctx := context.Background()
	if *aos == "" {
		dir, err := os.MkdirTemp("", "aos-memory-bin")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(dir)
		if *aos, err = stack.BuildAOS(stack.RepoRoot(), dir); err != nil {
			fatal(err)
		}
	}
	fmt.Printf("%d missions at once, 3 shell calls each; peak RSS (VmHWM) of aos worker\n\n", *missions)
	fmt.Println("| outputs | worker peak RSS | server peak RSS | wall |")
	fmt.Println("| --- | ---: | ---: | ---: |")
	var peaks []float64
	for _, n := range []int{*small, *size} {
		w, s, d, err := measure(ctx, *aos, *missions, n)
		if err != nil {
			fatal(err)
		}
		peaks = append(peaks, w)
		fmt.Printf("| %d bytes each | %.1f MiB | %.1f MiB | %.1f s |\n", n, w, s, d.Seconds())
	}
	fmt.Printf("\nlarge / small outputs: %.2f× the worker's peak RSS\n", peaks[1]/peaks[0])
}

func measure(ctx context.Context, aos string, missions, size int) (worker, server float64, wall time.Duration, err error) {
	st, err := stack.Start(ctx, stack.Options{Aos: aos, DB: "sqlite", Script: script(size), Runs: missions})
	if err != nil {
		return 0, 0, 0, err
	}
	defer st.Close()
	post := func(path, body string) ([]byte, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", st.Base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+st.Token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		return b, nil
	}
	// The owner allows the command, as they would with "always allow".
	if _, err := post("/policy/rules", `{"tool":"shell","commandPrefix":"head -c","decision":"allow","note":"bench/memory"}`); err != nil {
		return 0, 0, 0, err
	}
	start := time.Now()
	var ids []string
	for range missions {
		b, err := post("/missions", `{"objective":"print","criteria":["printed"],"workspace":"repo","model":"script:big","budgetUsd":5,"maxTurns":10}`)
		if err != nil {
			return 0, 0, 0, err
		}
		var m struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(b, &m)
		ids = append(ids, m.ID)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for _, id := range ids {
		for {
			req, _ := http.NewRequestWithContext(ctx, "GET", st.Base+"/missions/"+id, nil)
			req.Header.Set("Authorization", "Bearer "+st.Token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return 0, 0, 0, err
			}
			var m struct {
				Status string `json:"status"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&m)
			resp.Body.Close()
			if m.Status == "partial" {
				break
			}
			if m.Status == "failed" || m.Status == "blocked" || m.Status == "cancelled" || m.Status == "waiting" {
				return 0, 0, 0, fmt.Errorf("mission %s is %s (logs: rerun with a kept stack)", id, m.Status)
			}
			if time.Now().After(deadline) {
				return 0, 0, 0, fmt.Errorf("mission %s still %s after 5 minutes", id, m.Status)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	wall = time.Since(start)
	w, err := hwm(st.Pid("worker"))
	if err != nil {
		return 0, 0, 0, err
	}
	s, err := hwm(st.Pid("server"))
	return w, s, wall, err
}

// hwm is a process's peak resident set size (VmHWM) in MiB.
func hwm(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kb)
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM for %d", pid)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "memory:", err)
	os.Exit(1)
}
