package main_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
func freeAddr(t testing.TB) string {
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
			p := start(t, bin, env, "up")
			var seen strings.Builder
			setupTok := p.expect(t, regexp.MustCompile(`setup token: (aos_setup_\S+)`), &seen)[1]
			base := "http://" + addr
			waitHealthy(t, base, &seen)
			secret := ownerToken(t, base, setupTok)
			c := &upClient{t: t, base: base, token: secret}

			if err := demo.WriteRepo(filepath.Join(root, "repo")); err != nil {
				t.Fatal(err)
			}
			var proj struct {
				ID string `json:"id"`
			}
			c.do("POST", "/projects", map[string]any{"name": "calc", "path": "repo", "mode": "existing"}, 201, &proj)
			var m struct {
				ID        string `json:"id"`
				RootRunID string `json:"rootRunId"`
				Status    string `json:"status"`
			}
			c.do("POST", "/missions", map[string]any{"objective": "say hello", "criteria": []string{"it says hello"}, "projectId": proj.ID,
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
				if e.Kind == "model.delta" && e.ID != -1 {
					t.Fatalf("model.delta with id %d, want -1", e.ID)
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
			// The worker is another process: its transient model.delta
			// events reach this socket across processes, with id -1. The
			// turn after the approval starts after the socket connected.
			if !slices.Contains(kinds, "model.delta") {
				t.Errorf("no model.delta from the worker process; events %v", kinds)
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

// totp computes the RFC 6238 code (SHA-1, 30 s, 6 digits) of a base32
// secret at t, as the owner's authenticator app would.
func totp(t *testing.T, secretB32 string, at time.Time) string {
	t.Helper()
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(secretB32))
	if err != nil {
		t.Fatalf("totp secret: %v", err)
	}
	var msg [8]byte
	binary.BigEndian.PutUint64(msg[:], uint64(at.Unix()/30))
	m := hmac.New(sha1.New, key)
	m.Write(msg[:])
	sum := m.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	return fmt.Sprintf("%06d", (binary.BigEndian.Uint32(sum[off:off+4])&0x7fffffff)%1000000)
}

// ownerToken does the owner's first run over the API: the setup token
// printed by aos up, a password and a TOTP enrolment give a session, and
// the session mints an API token (shown once).
func ownerToken(t *testing.T, base, setupTok string) string {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	post := func(path string, body any, csrf string, want int, out any) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", base+"/api/v1"+path, bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		if csrf != "" {
			req.Header.Set("X-CSRF-Token", csrf)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("POST %s: %v", path, err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("POST %s = %d, want %d: %s", path, resp.StatusCode, want, raw)
		}
		if out != nil {
			if err := json.Unmarshal(raw, out); err != nil {
				t.Fatalf("POST %s: %s: %v", path, raw, err)
			}
		}
	}
	var begin struct {
		TOTPSecret string `json:"totpSecret"`
	}
	post("/auth/setup/begin", map[string]string{"setupToken": setupTok}, "", 200, &begin)
	var ses struct {
		CSRF string `json:"csrfToken"`
	}
	post("/auth/setup/complete", map[string]string{"setupToken": setupTok, "password": "correct horse battery staple",
		"totpCode": totp(t, begin.TOTPSecret, time.Now())}, "", 200, &ses)
	// A mutation by cookie without the CSRF token is refused.
	post("/tokens", map[string]any{"name": "upflow", "scopes": []string{"read", "write"}}, "", 403, nil)
	var tok struct {
		Token string `json:"token"`
	}
	post("/tokens", map[string]any{"name": "upflow", "scopes": []string{"read", "write"}}, ses.CSRF, 201, &tok)
	if !strings.HasPrefix(tok.Token, "aos_") {
		t.Fatalf("token %q", tok.Token)
	}
	return tok.Token
}
