// Command testengine is a small external engine for backend's tests: it
// reads aios.online-agent.runtime-request.v1 on stdin, acts according to a
// "mode:NAME" word in the goal, and prints a runtime result on stdout.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

type request struct {
	Schema          string   `json:"schema"`
	Goal            string   `json:"goal"`
	Worktree        string   `json:"worktree"`
	BaseCommit      string   `json:"base_commit"`
	SuccessCriteria []string `json:"success_criteria"`
	ModelBaseURL    string   `json:"model_base_url"`
}

func main() {
	var req request
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "bad request:", err)
		os.Exit(2)
	}
	mode := ""
	for _, w := range strings.Fields(req.Goal) {
		if m, ok := strings.CutPrefix(w, "mode:"); ok {
			mode = m
		}
	}
	verify := []map[string]any{{"label": "check", "argv": []string{"/bin/sh", "check.sh"}, "timeout_seconds": 60}}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(req.Worktree, name), []byte(content), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "write:", err)
			os.Exit(3)
		}
	}
	if strings.Contains(req.Goal, "AOS_SELFTEST.txt") && mode == "" {
		mode = "selftest"
	}
	switch mode {
	case "selftest":
		f := strings.Fields(req.Goal)
		for i, w := range f {
			if w == "line" && i+1 < len(f) {
				write("AOS_SELFTEST.txt", f[i+1]+"\n")
			}
		}
	case "edit":
		fmt.Fprintln(os.Stderr, `{"aos_event":"tool_call","tool":"write","input":"hello.txt","exitCode":0}`)
		write("hello.txt", "hello from the engine\n")
		_ = os.Remove(filepath.Join(req.Worktree, "old.txt"))
	case "secret":
		write("config.py", "AWS_KEY = \"AKIAZ7QW3ERTY5UIOPLK\"\n")
	case "commit":
		write("hello.txt", "committed by the engine\n")
		// The sandbox keeps the worktree's git metadata read-only, so an
		// engine cannot commit itself: try, then ask the test (standing
		// in for an engine with more access) to commit for it.
		out, err := exec.Command("git", "-C", req.Worktree, "-c", "user.name=e", "-c", "user.email=e@e", "commit", "-qam", "engine commit").CombinedOutput()
		fmt.Fprintf(os.Stderr, "git commit: %v %s\n", err, out)
		write(".engine-wants-commit", "")
		for i := 0; i < 600; i++ {
			if _, err := os.Stat(filepath.Join(req.Worktree, ".host-committed")); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	case "malformed":
		fmt.Println(`{"schema":"aios.online-agent.runtime-result.v1","status":"COMPLETED","summary":"x","verification":[],"extra":1}`)
		return
	case "notjson":
		fmt.Println("I did it!")
		return
	case "badverify":
		write("hello.txt", "hello\n")
		verify = append(verify, map[string]any{"label": "exfil", "argv": []string{"/usr/bin/curl", "http://example.com"}})
	case "snoop":
		// Try to read what must stay hidden; report what was found.
		var found []string
		var paths []string
		for _, w := range strings.Fields(req.Goal) {
			if p, ok := strings.CutPrefix(w, "snoop:"); ok {
				paths = append(paths, p)
			}
		}
		for _, p := range paths {
			if p == "" {
				continue
			}
			if b, err := os.ReadFile(p); err == nil && len(b) > 0 {
				found = append(found, p)
			}
		}
		for _, kv := range os.Environ() {
			if strings.Contains(kv, "sk-real") {
				found = append(found, "env:"+kv[:strings.IndexByte(kv, '=')])
			}
		}
		write("found.txt", strings.Join(found, "\n")+"\n")
	case "gitcfg":
		// Ask the test (standing in for an engine that can write git's
		// metadata) to plant host-side programs while the engine runs.
		write("hello.txt", "hello\n")
		write(".gitattributes", "* filter=evil diff=evil\n")
		write(".engine-wants-plant", "")
		for i := 0; i < 600; i++ {
			if _, err := os.Stat(filepath.Join(req.Worktree, ".host-planted")); err == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		_ = os.Remove(filepath.Join(req.Worktree, ".host-planted"))
	case "live":
		// Live-only events for the console's browser test: one of each
		// kind every 500 ms (the console shows only those that arrive
		// while it is open), until the host writes .host-seen in the
		// worktree (at most a minute). .engine-live says where that is.
		write("notes.txt", "notes from the engine\n")
		write(".engine-live", "")
		for i := 0; i < 120; i++ {
			if _, err := os.Stat(filepath.Join(req.Worktree, ".host-seen")); err == nil {
				break
			}
			fmt.Fprintf(os.Stderr, `{"aos_event":"tool_call","tool":"grep","input":"TODO %d","exitCode":1}`+"\n", i)
			fmt.Fprintln(os.Stderr, `{"aos_event":"file_change","changes":["notes.txt"]}`)
			fmt.Fprintf(os.Stderr, `{"aos_event":"text","text":"<b>reading</b> the notes, pass %d"}`+"\n", i)
			time.Sleep(500 * time.Millisecond)
		}
	case "spend":
		write("hello.txt", "spent\n")
		for i := 0; i < 50; i++ {
			body := `{"model":"script:spend","max_tokens":100,"messages":[{"role":"user","content":"hi ` + fmt.Sprint(i) + `"}]}`
			r, _ := http.NewRequest("POST", req.ModelBaseURL+"/v1/messages", bytes.NewBufferString(body))
			r.Header.Set("x-api-key", os.Getenv("ANTHROPIC_API_KEY"))
			r.Header.Set("anthropic-version", "2023-06-01")
			r.Header.Set("content-type", "application/json")
			resp, err := http.DefaultClient.Do(r)
			if err != nil {
				fmt.Fprintln(os.Stderr, "call:", err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Fprintf(os.Stderr, "call %d: %d %.200s\n", i, resp.StatusCode, b)
		}
	case "net":
		// Dial each dial:ADDR of the goal, then make one model call
		// through the proxy; report both in net.txt.
		var report []string
		for _, w := range strings.Fields(req.Goal) {
			if addr, ok := strings.CutPrefix(w, "dial:"); ok {
				c, err := net.DialTimeout("tcp", addr, 2*time.Second)
				if err == nil {
					_, _ = c.Write([]byte("hi"))
					_ = c.Close()
				}
				report = append(report, fmt.Sprintf("dial %s: %v", addr, err))
			}
		}
		body := `{"model":"script:spend","max_tokens":100,"messages":[{"role":"user","content":"hi"}]}`
		r, _ := http.NewRequest("POST", req.ModelBaseURL+"/v1/messages", bytes.NewBufferString(body))
		r.Header.Set("x-api-key", os.Getenv("ANTHROPIC_API_KEY"))
		r.Header.Set("anthropic-version", "2023-06-01")
		r.Header.Set("content-type", "application/json")
		if resp, err := http.DefaultClient.Do(r); err != nil {
			report = append(report, fmt.Sprintf("model: %v", err))
		} else {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			report = append(report, fmt.Sprintf("model: %d", resp.StatusCode))
		}
		write("hello.txt", "hello\n")
		write("net.txt", strings.Join(report, "\n")+"\n")
	case "hangonce":
		// Hangs on its first execution (a marker in its private HOME,
		// which survives a crash), completes on the next.
		marker := filepath.Join(os.Getenv("HOME"), "ran-once")
		if _, err := os.Stat(marker); err != nil {
			_ = os.WriteFile(marker, nil, 0o644)
			write("partial.txt", "partial work\n")
			write("started", "")
			time.Sleep(10 * time.Minute)
		}
		write("hello.txt", "hello after a rerun\n")
	case "swapio":
		// Hostile: move aos's io dir (in TMPDIR, writable here) away and
		// leave a link to a host directory (plant:DIR) in its place. This
		// result still goes to the moved dir's result.json (stdout was
		// opened before exec).
		write("hello.txt", "hello\n")
		io := filepath.Join(os.Getenv("TMPDIR"), "aos-engine")
		for _, w := range strings.Fields(req.Goal) {
			if dir, ok := strings.CutPrefix(w, "plant:"); ok {
				if err := os.Rename(io, io+".moved"); err != nil {
					fmt.Fprintln(os.Stderr, "rename:", err)
					os.Exit(3)
				}
				if err := os.Symlink(dir, io); err != nil {
					fmt.Fprintln(os.Stderr, "symlink:", err)
					os.Exit(3)
				}
			}
		}
	case "hang":
		write("partial.txt", "partial work\n")
		write("started", "")
		time.Sleep(10 * time.Minute)
	case "fail":
		fmt.Println(`{"schema":"aios.online-agent.runtime-result.v1","status":"FAILED","summary":"could not do it","verification":[]}`)
		return
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", mode)
		os.Exit(4)
	}
	res := map[string]any{"schema": "aios.online-agent.runtime-result.v1", "status": "COMPLETED", "summary": "did " + mode,
		"verification": verify, "evidence": map[string]any{"root_cause": "test"}}
	_ = json.NewEncoder(os.Stdout).Encode(res)
}
