package backend_test

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store/storetest"
)

const openclawScript = `
scripts:
  - name: oc
    price: {input: 1, output: 1}
    turns:
      - tool_calls:
          - name: write
            input: {path: "hello.txt", content: "hello from openclaw\n"}
        usage: {input: 1000, output: 50}
      - text: "Created hello.txt."
        usage: {input: 1100, output: 10}
`

// Real OpenClaw (AOS_TEST_OPENCLAW, or openclaw on PATH) runs `agent exec`
// as an engine in aos's sandbox (with a private /tmp), against the
// scripted model server through the metering proxy (a custom provider in
// its pinned config), writes a file with its own write tool, and aos
// verifies and commits the result; both model calls are charged.
func TestOpenClawEngine(t *testing.T) {
	t.Parallel()
	path := engineBinary(t, "AOS_TEST_OPENCLAW", "openclaw")
	e := newEnv(t, storetest.New(t, "sqlite"))
	srv := scripttest.Start(t, openclawScript)
	keys := &bearerRecorder{}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e.deps.Getenv = func(k string) string {
		if k == "AOS_OPENCLAW_PATH" {
			return path
		}
		return ""
	}
	e.deps.Proxy = &backend.ProxyConfig{Kernel: e.k, Forwarder: []string{exe, backend.ForwarderArg}, Client: &http.Client{Transport: keys},
		Models: []provider.ModelInfo{{ID: "script:oc", Price: provider.Price{Input: 1, Output: 1}}},
		Getenv: func(k string) string {
			switch k {
			case "OPENAI_API_KEY":
				return realKey
			case "OPENAI_BASE_URL":
				return srv.OpenAIBaseURL()
			}
			return ""
		}}
	in := backend.Input{Objective: "Create hello.txt", Criteria: []string{"hello.txt exists"}, Engine: "openclaw", Model: "script:oc",
		Verify: []backend.Verification{{Argv: []string{"/bin/sh", "check.sh"}}}, VerifyAllow: []string{"/bin/sh check.sh"}}
	_, rid := e.mission(in, kernel.Budget{USD: 1})
	e.start()
	_, out := e.waitFor(5*time.Minute, rid, kernel.StatusDone)
	if out.Commit == "" || !strings.Contains(out.EngineResult.Summary, "Created hello.txt") {
		t.Fatalf("outcome %+v", out)
	}
	if got := e.hostGit(e.repo, "show", out.Commit+":hello.txt"); got != "hello from openclaw" {
		t.Fatalf("committed hello.txt = %q", got)
	}
	if out.Spend.Calls < 2 {
		t.Fatalf("spend %+v, want the two scripted calls", out.Spend)
	}
	keys.mu.Lock()
	defer keys.mu.Unlock()
	for _, k := range keys.keys {
		if k != "Bearer "+realKey {
			t.Errorf("upstream authorization %q", k)
		}
	}
	t.Logf("openclaw: %s; spend %+v", out.EngineResult.Summary, out.Spend)
}
