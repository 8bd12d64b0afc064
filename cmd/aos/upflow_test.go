package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aos-run/aos/internal/demo"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store/storetest"
)

const upFlowScript = `name: upflow
turns:
  - tool_calls: [{name: shell, input: {command: "echo hello from aos up", timeoutSec: 10}}]
  - expect: [{last_tool_result_contains: "hello from aos up"}]
    tool_calls:
      - {name: finish, input: {status: partial, summary: "said hello", evidence: [], openQuestions: []}}
`

// upClient speaks to a running `aos up` over HTTP with a bearer token.
type upClient struct {
	t     *testing.T
	base  string
	token string
}

func (c *upClient) do(method, path string, body any, want int, out any) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+"/api/v1"+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		c.t.Fatalf("%s %s = %d, want %d: %s", method, path, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			c.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitHealthy polls the health route until the server answers.
func waitHealthy(t *testing.T, base string, seen *strings.Builder) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/api/v1/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server never answered: %v\n%s", err, seen.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestUpFullFlow runs `aos up` as a real subprocess (server and worker as
// its children) on SQLite and on PostgreSQL, and drives a mission through
// the API only: create it against a scripted model, watch it over the
// WebSocket, approve its shell call when wait.created arrives, and see the
// mission end. The worker is another process, so everything the test sees
// crossed the database.
func TestUpFullFlow(t *testing.T) {
	bin := buildAOS(t)
	for _, driver := range storetest.Drivers() {
		t.Run(driver, func(t *testing.T) {
			srv := scripttest.Start(t, upFlowScript)
			dataDir, root := t.TempDir(), t.TempDir()
			addr := freeAddr(t)
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AOS_DATA_DIR=" + dataDir, "AOS_ADDR=" + addr,
				"AOS_WORKSPACE_ROOT=" + root, "ANTHROPIC_BASE_URL=" + srv.URL(), "AOS_LOG_LEVEL=warn"}
			if driver == "postgres" {
				db := storetest.New(t, "postgres")
				_ = db.Store.Close() // the children open it themselves
				env = append(env, "AOS_DATABASE_URL="+db.DSN)
			}
			tok := run(t, bin, env, "token", "create", "--name", "upflow")
			if tok.code != 0 {
				t.Fatalf("aos token create: %d %s", tok.code, tok.out)
			}
			secret := regexp.MustCompile(`aos_[A-Za-z0-9_-]{43}`).FindString(tok.out)
			if secret == "" {
				t.Fatalf("no token in %q", tok.out)
			}
			p := start(t, bin, env, "up")
			var seen strings.Builder
			p.expect(t, regexp.MustCompile(`up on `), &seen)
			base := "http://" + addr
			waitHealthy(t, base, &seen)
			c := &upClient{t: t, base: base, token: secret}

			if err := demo.WriteRepo(filepath.Join(root, "repo")); err != nil {
				t.Fatal(err)
			}
			var m struct {
				ID        string `json:"id"`
				RootRunID string `json:"rootRunId"`
				Status    string `json:"status"`
			}
			c.do("POST", "/missions", map[string]any{"objective": "say hello", "criteria": []string{"it says hello"}, "workspace": "repo",
				"model": "script:upflow", "network": "open", "budgetUsd": 0.1, "maxTurns": 10}, 201, &m)

			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/api/v1/events?cursor=0&missionId="+m.ID,
				&websocket.DialOptions{Subprotocols: []string{"bearer." + secret}})
			if err != nil {
				t.Fatalf("dial events: %v", err)
			}
			defer ws.CloseNow()
			var kinds []string
			approved := false
			var last int64
			for {
				_, raw, err := ws.Read(ctx)
				if err != nil {
					t.Fatalf("events ended (%v) after %v\n%s", err, kinds, seen.String())
				}
				var e struct {
					ID      int64           `json:"id"`
					Kind    string          `json:"kind"`
					RunID   string          `json:"runId"`
					Payload json.RawMessage `json:"payload"`
				}
				if err := json.Unmarshal(raw, &e); err != nil {
					t.Fatalf("frame %s: %v", raw, err)
				}
				if e.ID > 0 {
					if e.ID <= last {
						t.Fatalf("event %d after %d: replay out of order", e.ID, last)
					}
					last = e.ID
				}
				kinds = append(kinds, e.Kind)
				if e.Kind == "wait.created" && !approved {
					var w struct {
						WaitID string `json:"waitId"`
						Kind   string `json:"kind"`
					}
					if err := json.Unmarshal(e.Payload, &w); err != nil || w.Kind != "approval" {
						t.Fatalf("wait.created %s", e.Payload)
					}
					c.do("POST", "/waits/"+w.WaitID+"/resolve", map[string]any{"approved": true}, 200, nil)
					approved = true
				}
				if e.Kind == "run.completed" && e.RunID == m.RootRunID {
					break
				}
			}
			c.do("GET", "/missions/"+m.ID, nil, 200, &m)
			if !approved || m.Status != "partial" {
				t.Fatalf("approved %v, mission %s; events %v", approved, m.Status, kinds)
			}
			var steps []struct {
				Kind   string          `json:"kind"`
				Name   string          `json:"name"`
				Result json.RawMessage `json:"result"`
			}
			c.do("GET", "/runs/"+m.RootRunID+"/steps", nil, 200, &steps)
			shell := false
			for _, s := range steps {
				shell = shell || s.Kind == "tool_call" && s.Name == "shell" && strings.Contains(string(s.Result), "hello from aos up")
			}
			if !shell {
				t.Fatalf("no shell step with the output in %d steps", len(steps))
			}
			_ = p.cmd.Process.Signal(os.Interrupt)
			if code := p.exit(t); code != 0 {
				t.Fatalf("aos up exit = %d:\n%s", code, seen.String())
			}
		})
	}
}
