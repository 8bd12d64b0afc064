package backend_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store/storetest"
)

const codexScript = `
scripts:
  - name: cx
    price: {input: 1, output: 1}
    turns:
      - tool_calls:
          - name: exec_command
            input: {cmd: "printf 'hello from codex\\n' > hello.txt"}
        usage: {input: 1000, output: 50}
      - text: "Created hello.txt."
        usage: {input: 1100, output: 10}
`

// Real Codex CLI (AOS_TEST_CODEX, or codex on PATH) runs as an engine in
// aos's sandbox with its own sandbox off, against the scripted model
// server through the metering proxy (a custom provider in CODEX_HOME),
// runs a real shell command that edits the worktree, and aos verifies and
// commits the result.
func TestCodexEngine(t *testing.T) {
	t.Parallel()
	path := engineBinary(t, "AOS_TEST_CODEX", "codex")
	e := newEnv(t, storetest.New(t, "sqlite"))
	srv := scripttest.Start(t, codexScript)
	keys := &bearerRecorder{}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e.deps.Getenv = func(k string) string {
		if k == "AOS_CODEX_PATH" {
			return path
		}
		return ""
	}
	e.deps.Proxy = &backend.ProxyConfig{Kernel: e.k, Forwarder: []string{exe, backend.ForwarderArg}, Client: &http.Client{Transport: keys},
		Models: []provider.ModelInfo{{ID: "script:cx", Price: provider.Price{Input: 1, Output: 1}}},
		Getenv: func(k string) string {
			switch k {
			case "OPENAI_API_KEY":
				return realKey
			case "OPENAI_BASE_URL":
				return srv.OpenAIBaseURL()
			}
			return ""
		}}
	in := backend.Input{Objective: "Create hello.txt", Criteria: []string{"hello.txt exists"}, Engine: "codex", Model: "script:cx",
		Verify: []backend.Verification{{Argv: []string{"/bin/sh", "check.sh"}}}, VerifyAllow: []string{"/bin/sh check.sh"}}
	_, rid := e.mission(in, kernel.Budget{USD: 1})
	e.start()
	_, out := e.wait(rid, kernel.StatusDone)
	if out.Commit == "" || !strings.Contains(out.EngineResult.Summary, "Created hello.txt") {
		t.Fatalf("outcome %+v", out)
	}
	if got := e.hostGit(e.repo, "show", out.Commit+":hello.txt"); got != "hello from codex" {
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
	t.Logf("codex: %s; spend %+v", out.EngineResult.Summary, out.Spend)
}

// bearerRecorder records each upstream request's Authorization header.
type bearerRecorder struct{ keyRecorder }

func (b *bearerRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	b.mu.Lock()
	b.keys = append(b.keys, r.Header.Get("Authorization"))
	b.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}
