package backend

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aos-run/aos/internal/kernel"
	"github.com/aos-run/aos/internal/provider"
)

// ProxyConfig configures the metering model proxy of engine runs.
type ProxyConfig struct {
	// Getenv reads the worker's environment: the real keys
	// (ANTHROPIC_API_KEY, OPENAI_API_KEY) and upstream base URLs
	// (ANTHROPIC_BASE_URL, OPENAI_BASE_URL). Nil is an empty environment
	// (no key: upstream calls are refused). The engine never sees any of
	// them.
	Getenv func(string) string
	// Models adds priced models (a priced script, local models).
	Models []provider.ModelInfo
	// Kernel reads the daily cap and today's spend.
	Kernel *kernel.Kernel
	// Forwarder is the in-sandbox half: the program and arguments that run
	// ForwarderMain (the aos binary with ForwarderArg by default).
	Forwarder []string
	// Client is the upstream HTTP client (http.DefaultClient when nil).
	Client *http.Client
}

// ProxyPort is the loopback port the forwarder listens on inside the
// engine's own network namespace.
const ProxyPort = 41177

// Upstream defaults.
const (
	anthropicDefault = "https://api.anthropic.com"
	openaiDefault    = "https://api.openai.com"
	maxRequestBody   = 32 << 20
)

// limits is what one engine execution may spend.
type limits struct {
	usd   float64 // +Inf: no limit
	turns int     // -1: no limit
	prior Spend
}

// proxyRun is one engine execution's proxy.
type proxyRun struct {
	cfg       *ProxyConfig
	lim       limits
	led       *ledger
	token     string
	exhausted func()
	onCall    func(total Spend)
	book      provider.PriceBook
	ctl       *ctlServer
	srv       *http.Server
	done      chan struct{}

	mu       sync.Mutex // guards spend and over
	spend    Spend      // this execution's calls
	over     string     // why the budget is spent, once it is
	inflight int
}

func (c *ProxyConfig) getenv(k string) string {
	if c.Getenv != nil {
		return c.Getenv(k)
	}
	return ""
}

// start serves a proxy for one engine execution until close. exhausted is
// called (once or more) when a budget is spent; the caller kills the
// engine.
func (c *ProxyConfig) start(ctx context.Context, l limits, led *ledger, onCall func(total Spend), exhausted func()) (*proxyRun, error) {
	tok := make([]byte, 24)
	if _, err := rand.Read(tok); err != nil {
		return nil, fmt.Errorf("backend: proxy credential: %w", err)
	}
	ctl, err := newCtlServer()
	if err != nil {
		return nil, err
	}
	p := &proxyRun{cfg: c, lim: l, led: led, token: "aos-run-" + hex.EncodeToString(tok), exhausted: exhausted, onCall: onCall,
		book: provider.NewPriceBook(c.Models...), ctl: ctl, done: make(chan struct{})}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		defer close(p.done)
		_ = p.srv.Serve(ctl)
	}()
	return p, nil
}

// close stops the proxy and its connections.
func (p *proxyRun) close() {
	_ = p.srv.Close()
	_ = p.ctl.Close()
	<-p.done
}

// env is what the engine gets: base URLs pointing at the forwarder and
// the per-run credential in every variable SDKs read a key from.
func (p *proxyRun) env() []string {
	u := p.engineURL()
	return []string{"ANTHROPIC_BASE_URL=" + u, "ANTHROPIC_API_KEY=" + p.token, "ANTHROPIC_AUTH_TOKEN=" + p.token,
		"OPENAI_BASE_URL=" + u + "/v1", "OPENAI_API_KEY=" + p.token, "AOS_MODEL_BASE_URL=" + u, "AOS_MODEL_TOKEN=" + p.token}
}

func (p *proxyRun) engineURL() string { return fmt.Sprintf("http://127.0.0.1:%d", ProxyPort) }

// wrap is the launcher that runs the forwarder with the control socket.
func (p *proxyRun) wrap() []string {
	fw := p.cfg.Forwarder
	if len(fw) == 0 {
		exe, _ := os.Executable()
		fw = []string{exe, ForwarderArg}
	}
	return append(append([]string{}, fw...), fmt.Sprint(ctlFD))
}

// extraFiles are the files the sandbox passes to the forwarder.
func (p *proxyRun) extraFiles() []*os.File { return []*os.File{p.ctl.childEnd} }

// route is one proxied API path.
type route struct {
	provider string // anthropic or openai
	upstream string // path at the upstream
	charged  bool
}

func routeOf(method, path string) (route, bool) {
	switch {
	case method == http.MethodPost && path == "/v1/messages":
		return route{"anthropic", path, true}, true
	case method == http.MethodPost && path == "/v1/messages/count_tokens":
		return route{"anthropic", path, false}, true
	case method == http.MethodPost && (path == "/v1/responses" || path == "/v1/chat/completions"):
		return route{"openai", path, true}, true
	case method == http.MethodGet && (path == "/v1/models" || strings.HasPrefix(path, "/v1/models/")):
		return route{"anthropic", path, false}, true
	}
	return route{}, false
}

func (p *proxyRun) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.authorized(r) {
		proxyError(w, http.StatusUnauthorized, "authentication_error", "aos proxy: unknown credential")
		return
	}
	rt, ok := routeOf(r.Method, r.URL.Path)
	if ok && !rt.charged && r.Header.Get("x-api-key") == "" {
		rt.provider = "openai" // GET /v1/models from an OpenAI client
	}
	if !ok {
		proxyError(w, http.StatusNotFound, "not_found_error", "aos proxy: no such route")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
	if err != nil || len(body) > maxRequestBody {
		proxyError(w, http.StatusRequestEntityTooLarge, "invalid_request_error", "aos proxy: request body too large")
		return
	}
	var head struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(body, &head)
	var price provider.Price
	if rt.charged {
		var known bool
		// A scripted model (tests, demos) without a price costs nothing,
		// as in the built-in loop; any other unpriced model is refused.
		if price, known = p.book.Lookup(head.Model); !known && !provider.IsScripted(head.Model) {
			proxyError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("aos proxy: model %q has no price, so aos cannot meter it", clip(head.Model, 80)))
			return
		}
		if why := p.admit(r.Context()); why != "" {
			p.exhausted()
			proxyError(w, http.StatusTooManyRequests, "rate_limit_error", "aos proxy: the mission's budget is spent ("+why+")")
			return
		}
		defer p.release()
	}
	p.forward(w, r, rt, body, head.Model, price)
}

func (p *proxyRun) authorized(r *http.Request) bool {
	got := r.Header.Get("x-api-key")
	if got == "" {
		got, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(p.token)) == 1
}

// admit refuses a charged call once a budget is spent; it counts the call
// in flight so that concurrent calls cannot all pass the last check.
func (p *proxyRun) admit(ctx context.Context) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.over != "" {
		return p.over
	}
	if p.lim.turns >= 0 && p.spend.Calls+p.inflight >= p.lim.turns {
		p.over = "turns"
	} else if !math.IsInf(p.lim.usd, 1) && p.spend.USD >= p.lim.usd {
		p.over = "usd"
	} else if k := p.cfg.Kernel; k != nil {
		if cap, err := k.DailyCap(ctx); err == nil && cap > 0 {
			if today, err := k.SpentToday(ctx); err == nil && today+p.spend.USD+p.lim.prior.USD >= cap {
				p.over = "daily"
			}
		}
	}
	if p.over != "" {
		return p.over
	}
	p.inflight++
	return ""
}

func (p *proxyRun) release() {
	p.mu.Lock()
	p.inflight--
	p.mu.Unlock()
}

// forward sends the call upstream with the real key and meters the
// response's usage as it streams back.
func (p *proxyRun) forward(w http.ResponseWriter, r *http.Request, rt route, body []byte, model string, price provider.Price) {
	base, key, err := p.upstream(rt.provider)
	if err != nil {
		proxyError(w, http.StatusBadGateway, "api_error", "aos proxy: "+err.Error())
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, base+rt.upstream, bytes.NewReader(body))
	if err != nil {
		proxyError(w, http.StatusBadGateway, "api_error", "aos proxy: bad upstream request")
		return
	}
	for _, h := range []string{"Content-Type", "Accept", "Anthropic-Version", "Anthropic-Beta", "OpenAI-Beta"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	if rt.provider == "anthropic" {
		req.Header.Set("x-api-key", key)
	} else {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	client := p.cfg.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		proxyError(w, http.StatusBadGateway, "api_error", "aos proxy: the provider could not be reached")
		return
	}
	defer resp.Body.Close()
	for _, h := range []string{"Content-Type", "Request-Id", "X-Request-Id", "Retry-After"} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	m := &usageMeter{}
	tee := io.TeeReader(resp.Body, m)
	buf := make([]byte, 32<<10)
	fl, _ := w.(http.Flusher)
	for {
		n, err := tee.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				break
			}
			if fl != nil {
				fl.Flush()
			}
		}
		if err != nil {
			break
		}
	}
	if !rt.charged {
		return
	}
	u := m.usage()
	s := Spend{Calls: 1, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CacheReadTokens: u.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens, USD: price.Cost(u)}
	p.charge(r.Context(), s)
}

// charge records a call in the ledger and cuts the engine off when it
// spent a budget.
func (p *proxyRun) charge(ctx context.Context, s Spend) {
	_ = p.led.append(s) // a failed write is charged in memory at least
	p.mu.Lock()
	p.spend = p.spend.add(s)
	spent := (p.lim.turns >= 0 && p.spend.Calls >= p.lim.turns) || (!math.IsInf(p.lim.usd, 1) && p.spend.USD >= p.lim.usd)
	if spent && p.over == "" {
		p.over = "spent"
	}
	total := p.lim.prior.add(p.spend)
	p.mu.Unlock()
	if p.onCall != nil {
		p.onCall(total)
	}
	if spent {
		p.exhausted()
	}
	_ = ctx
}

func (p *proxyRun) upstream(prov string) (base, key string, err error) {
	envBase, envKey, def := "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", anthropicDefault
	if prov == "openai" {
		envBase, envKey, def = "OPENAI_BASE_URL", "OPENAI_API_KEY", openaiDefault
	}
	key = p.cfg.getenv(envKey)
	if key == "" {
		return "", "", fmt.Errorf("no %s in the worker's environment", envKey)
	}
	base = strings.TrimRight(p.cfg.getenv(envBase), "/")
	if base == "" {
		base = def
	}
	base = strings.TrimSuffix(base, "/v1")
	if u, err := url.Parse(base); err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return "", "", fmt.Errorf("%s is not an http(s) URL", envBase)
	}
	return base, key, nil
}

func proxyError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	_, _ = w.Write(b)
}

// usageMeter reads usage from a response as it passes: a JSON body, or
// server-sent events (Anthropic message_start/message_delta, OpenAI
// response.completed, chat chunks with usage). The largest value seen per
// field wins, since streams repeat cumulative counts.
type usageMeter struct {
	buf bytes.Buffer
	u   provider.Usage
}

func (m *usageMeter) Write(b []byte) (int, error) {
	if m.buf.Len()+len(b) > 64<<20 {
		return len(b), nil
	}
	return m.buf.Write(b)
}

func (m *usageMeter) usage() provider.Usage {
	data := m.buf.Bytes()
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		m.scan(data)
		return m.u
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:")); ok {
			m.scan(bytes.TrimSpace(d))
		}
	}
	return m.u
}

// scan takes usage from one JSON object, wherever a provider puts it.
func (m *usageMeter) scan(obj []byte) {
	var v struct {
		Usage    *wireUsage                  `json:"usage"`
		Message  *struct{ Usage *wireUsage } `json:"message"`
		Response *struct{ Usage *wireUsage } `json:"response"`
	}
	if json.Unmarshal(obj, &v) != nil {
		return
	}
	for _, u := range []*wireUsage{v.Usage, msgUsage(v.Message), msgUsage(v.Response)} {
		if u != nil {
			m.take(u)
		}
	}
}

func msgUsage(s *struct{ Usage *wireUsage }) *wireUsage {
	if s == nil {
		return nil
	}
	return s.Usage
}

// wireUsage is every provider's usage object's fields.
type wireUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	PromptTokens             int64 `json:"prompt_tokens"`
	CompletionTokens         int64 `json:"completion_tokens"`
	InputTokensDetails       *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	PromptTokensDetails *struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

func (m *usageMeter) take(w *wireUsage) {
	in, cached := w.InputTokens, int64(0)
	if w.PromptTokens > 0 {
		in = w.PromptTokens
	}
	if w.InputTokensDetails != nil {
		cached = w.InputTokensDetails.CachedTokens
	}
	if w.PromptTokensDetails != nil {
		cached = w.PromptTokensDetails.CachedTokens
	}
	out := max(w.OutputTokens, w.CompletionTokens)
	u := provider.Usage{InputTokens: in - cached, OutputTokens: out, CacheReadTokens: w.CacheReadInputTokens + cached, CacheWriteTokens: w.CacheCreationInputTokens}
	m.u.InputTokens = max(m.u.InputTokens, u.InputTokens)
	m.u.OutputTokens = max(m.u.OutputTokens, u.OutputTokens)
	m.u.CacheReadTokens = max(m.u.CacheReadTokens, u.CacheReadTokens)
	m.u.CacheWriteTokens = max(m.u.CacheWriteTokens, u.CacheWriteTokens)
}
