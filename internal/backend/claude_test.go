package backend_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/sandbox"
	"github.com/aos-run/aos/internal/store/storetest"
)

const claudeScript = `
scripts:
  - name: cc
    price: {input: 1, output: 1}
    turns:
      - tool_calls:
          - name: Write
            input: {file_path: "hello.txt", content: "hello from claude code\n"}
        usage: {input: 1000, output: 100}
      - text: "Created hello.txt."
        usage: {input: 1100, output: 20}
`

// Real Claude Code (AOS_TEST_CLAUDE, or claude on PATH) runs as an engine
// in aos's sandbox, against the scripted model server through the
// metering proxy with the per-run credential, makes a real edit, and aos
// verifies and commits it; its two model calls are charged. With the
// mission's network none and open alike: under open the proxy is still
// reached only through the forwarder.
func TestClaudeCodeEngine(t *testing.T) {
	t.Parallel()
	path := engineBinary(t, "AOS_TEST_CLAUDE", "claude")
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skip("network open needs /dev/net/tun")
	}
	for _, network := range []string{"none", "open"} {
		t.Run(network, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, storetest.New(t, "sqlite"))
			srv := scripttest.Start(t, claudeScript)
			keys := &keyRecorder{}
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			e.deps.Getenv = func(k string) string {
				if k == "AOS_CLAUDE_PATH" {
					return path
				}
				return ""
			}
			e.deps.Proxy = &backend.ProxyConfig{Kernel: e.k, Forwarder: []string{exe, backend.ForwarderArg}, Client: &http.Client{Transport: keys},
				Models: []provider.ModelInfo{{ID: "script:cc", Price: provider.Price{Input: 1, Output: 1}}},
				Getenv: func(k string) string {
					switch k {
					case "ANTHROPIC_API_KEY":
						return realKey
					case "ANTHROPIC_BASE_URL":
						return srv.URL()
					}
					return ""
				}}
			in := backend.Input{Objective: "Create hello.txt", Criteria: []string{"hello.txt exists"}, Engine: "claude", Model: "script:cc", Network: network,
				Verify: []backend.Verification{{Argv: []string{"/bin/sh", "check.sh"}}}, VerifyAllow: []string{"/bin/sh check.sh"}}
			_, rid := e.mission(in, kernel.Budget{USD: 1})
			e.start()
			r, out := e.wait(rid, kernel.StatusDone)
			if out.Commit == "" || out.EngineResult.Status != backend.StatusCompleted || !strings.Contains(out.EngineResult.Summary, "Created hello.txt") {
				t.Fatalf("outcome %+v", out)
			}
			if got := e.hostGit(e.repo, "show", out.Commit+":hello.txt"); got != "hello from claude code" {
				t.Fatalf("committed hello.txt = %q", got)
			}
			if out.Spend.Calls < 2 {
				t.Fatalf("spend %+v, want the two scripted calls", out.Spend)
			}
			keys.mu.Lock()
			for _, k := range keys.keys {
				if k != realKey {
					t.Errorf("upstream key %q", k)
				}
			}
			keys.mu.Unlock()
			t.Logf("claude (network %s): %s; spend %+v; run usage %s", network, out.EngineResult.Summary, out.Spend, r.Usage)
		})
	}
}

// The self-test of real Claude Code: through the proxy, it creates the
// requested file and nothing else while HEAD stays at the base.
func TestClaudeCodeSelfTest(t *testing.T) {
	t.Parallel()
	path := engineBinary(t, "AOS_TEST_CLAUDE", "claude")
	srv := scripttest.Start(t, `
scripts:
  - name: st
    turns:
      - tool_calls:
          - name: Write
            input: {file_path: "AOS_SELFTEST.txt", content: "aos-selftest-token\n"}
      - text: "Done."
`)
	sb, err := sandbox.New(sandbox.Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	px := &backend.ProxyConfig{Forwarder: []string{exe, backend.ForwarderArg}, Models: []provider.ModelInfo{{ID: "script:st"}},
		Getenv: func(k string) string {
			switch k {
			case "ANTHROPIC_API_KEY":
				return realKey
			case "ANTHROPIC_BASE_URL":
				return srv.URL()
			}
			return ""
		}}
	getenv := func(k string) string {
		if k == "AOS_CLAUDE_PATH" {
			return path
		}
		return ""
	}
	rec, err := backend.SelfTestWith(context.Background(), sb, "claude", t.TempDir(), time.Minute,
		backend.SelfTestOptions{Proxy: px, Model: "script:st", Getenv: getenv, Token: "aos-selftest-token"})
	if err != nil || !rec.Passed || rec.Spend.Calls != 2 || !strings.Contains(rec.Version, "Claude Code") {
		t.Fatalf("self-test %+v %v", rec, err)
	}
	// A model that does something else fails it.
	rec, err = backend.SelfTestWith(context.Background(), sb, "claude", t.TempDir(), time.Minute,
		backend.SelfTestOptions{Proxy: px, Model: "script:st", Getenv: getenv, Token: "another-token"})
	if err != nil || rec.Passed {
		t.Fatalf("a wrong file passed: %+v %v", rec, err)
	}
}
