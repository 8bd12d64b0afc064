package backend_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/aos-run/aos/internal/backend"
	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider"
	"github.com/aos-run/aos/internal/provider/script/scripttest"
	"github.com/aos-run/aos/internal/store/storetest"
)

const spendScript = `
scripts:
  - name: spend
    price: {input: 1, output: 1}
    repeat: true
    turns:
      - text: ok
        usage: {input: 1000, output: 1000}
`

const realKey = "sk-real-key-for-test-0123456789"

// withProxy gives the engine a metering proxy in front of a scripted model
// server; the real key is only in the proxy's environment.
func (e *env) withProxy(t *testing.T) func() int {
	srv := scripttest.Start(t, spendScript)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	keys := &keyRecorder{}
	e.deps.Proxy = &backend.ProxyConfig{Kernel: e.k, Client: &http.Client{Transport: keys}, Forwarder: []string{exe, backend.ForwarderArg},
		Models: []provider.ModelInfo{{ID: "script:spend", Price: provider.Price{Input: 1, Output: 1}}},
		Getenv: func(k string) string {
			switch k {
			case "ANTHROPIC_API_KEY":
				return realKey
			case "ANTHROPIC_BASE_URL":
				return srv.URL()
			}
			return ""
		}}
	return func() int {
		n := 0
		for _, r := range srv.Requests() {
			if r.Path == "/v1/messages" {
				n++
			}
		}
		keys.mu.Lock()
		defer keys.mu.Unlock()
		if len(keys.keys) != n {
			t.Errorf("%d upstream requests carried keys, the server saw %d", len(keys.keys), n)
		}
		for _, k := range keys.keys {
			if k != realKey {
				t.Errorf("the provider was sent key %q, want the real one", k)
			}
		}
		return n
	}
}

// keyRecorder records the key of each upstream request (the scripted
// server redacts keys in its own log).
type keyRecorder struct {
	mu   sync.Mutex
	keys []string
}

func (k *keyRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	k.mu.Lock()
	k.keys = append(k.keys, r.Header.Get("X-Api-Key"))
	k.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// An engine that keeps calling the model through the proxy is refused and
// killed once the mission's USD budget is spent; the spend is recorded on
// the run, and the provider saw only the calls the budget allowed, each
// with the real key, which the engine never had.
func TestProxyBudgetKillsEngine(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db storetest.DB) {
		t.Parallel()
		e := newEnv(t, db)
		calls := e.withProxy(t)
		in := e.commandInput("spend")
		in.Model = "script:spend"
		// Each call costs $0.002 (1000 in + 1000 out at $1/MTok): two pass,
		// the third spends the budget.
		_, rid := e.mission(in, kernel.Budget{USD: 0.005})
		e.start()
		r, out := e.wait(rid, kernel.StatusBudgetExhausted)
		if out.EngineResult.Killed != "budget" || out.Spend.Calls != 3 || math.Abs(out.Spend.USD-0.006) > 1e-9 {
			t.Fatalf("engine result %+v spend %+v", out.EngineResult, out.Spend)
		}
		var u kernel.Usage
		if err := json.Unmarshal(r.Usage, &u); err != nil {
			t.Fatalf("run usage %s: %v", r.Usage, err)
		}
		if math.Abs(u.CostUSD-0.006) > 1e-9 || u.Turns != 3 || u.InputTokens != 3000 {
			t.Fatalf("run usage %+v", u)
		}
		if n := calls(); n != 3 {
			t.Fatalf("the provider saw %d calls, want 3", n)
		}
		spent, err := e.k.SpentToday(context.Background())
		if err != nil || math.Abs(spent-0.006) > 1e-9 {
			t.Fatalf("today's spend %v %v", spent, err)
		}
	})
}
