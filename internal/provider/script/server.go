package script

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aos-run/aos/internal/provider"
)

// Recorded is one request the server received, as tests and GET /_requests
// see it. Credentials are redacted from Header.
type Recorded struct {
	Seq    int             `json:"seq"`
	Time   time.Time       `json:"time"`
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Header http.Header     `json:"header"`
	Body   json.RawMessage `json:"body,omitempty"`
	Format Format          `json:"format,omitempty"`
	Script string          `json:"script,omitempty"`
	Turn   int             `json:"turn"`
	// Attempt is the retry number of this call (0 for the first attempt).
	Attempt int `json:"attempt"`
	// AttemptSource is "header" (X-Stainless-Retry-Count), "counter" (by
	// canonical body) or "turn" (by script and turn: attempts_by turn).
	AttemptSource string `json:"attemptSource,omitempty"`
	Status        int    `json:"status"`
	// Error is the scripted error or the failed assertion, if any.
	Error string `json:"error,omitempty"`
}

// Server is the scripted model server. It is an http.Handler; Start also
// listens on loopback. Its only state is the request log and the attempt
// counter for clients that send no retry header (guarded by mu).
type Server struct {
	set *Set
	now func() time.Time

	base   context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	reqs     []Recorded
	attempts map[[32]byte]int
	ln       net.Listener
	srv      *http.Server
}

// Options configure a Server.
type Options struct {
	// Now timestamps recorded requests; default time.Now.
	Now func() time.Time
}

// NewServer returns a handler that answers with the scripts of set (plus
// the built-in ones).
func NewServer(set *Set, opts Options) *Server {
	if set == nil {
		set = &Set{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{set: set.WithBuiltins(), now: opts.Now, base: ctx, cancel: cancel, attempts: map[[32]byte]int{}}
}

// Start listens on addr (default "127.0.0.1:0") and serves in the
// background. addr must be a loopback address.
func Start(set *Set, addr string, opts Options) (*Server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("script: listen %s: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("script: listen %s: the scripted model server listens on loopback only", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("script: listen: %w", err)
	}
	s := NewServer(set, opts)
	s.ln = ln
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return s.base }}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// URL is the server's root URL: the Anthropic base URL.
func (s *Server) URL() string {
	if s.ln == nil {
		return ""
	}
	return "http://" + s.ln.Addr().String()
}

// OpenAIBaseURL is the base URL for the OpenAI SDK (root + "/v1").
func (s *Server) OpenAIBaseURL() string { return s.URL() + "/v1" }

// Close stops stalled streams and the listener.
func (s *Server) Close() error {
	s.cancel()
	if s.srv != nil {
		return s.srv.Close()
	}
	return nil
}

// Requests returns a copy of the request log, oldest first.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// Reset clears the request log and the attempt counters.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = nil
	clear(s.attempts)
}

// record appends r to the log and returns its sequence number.
func (s *Server) record(r *Recorded) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.Seq = len(s.reqs)
	s.reqs = append(s.reqs, *r)
	return r.Seq
}

// setError notes a failure found after a request was recorded.
func (s *Server) setError(seq int, msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq < len(s.reqs) {
		s.reqs[seq].Error = msg
	}
}

// redactHeader copies h without credentials.
func redactHeader(h http.Header) http.Header {
	out := h.Clone()
	for _, k := range []string{"Authorization", "X-Api-Key", "Api-Key", "Cookie", "Proxy-Authorization"} {
		if out.Get(k) != "" {
			out.Set(k, "[redacted]")
		}
	}
	return out
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/_requests":
		w.Header().Set("Content-Type", "application/json")
		reqs := s.Requests()
		if reqs == nil {
			reqs = []Recorded{}
		}
		_ = json.NewEncoder(w).Encode(reqs)
	case r.Method == http.MethodGet && (r.URL.Path == "/v1/models" || r.URL.Path == "/models"):
		s.serveModels(w, r)
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/models/") && len(r.URL.Path) > len("/v1/models/"):
		s.serveModel1(w, r, strings.TrimPrefix(r.URL.Path, "/v1/models/"))
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
		s.serveCountTokens(w, r, body, err)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.serveModel(w, r, FormatAnthropic)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/responses":
		s.serveModel(w, r, FormatResponses)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		s.serveModel(w, r, FormatChat)
	case r.Method == http.MethodGet && r.URL.Path == "/":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "aos scripted model server (a fake model for tests): POST /v1/messages, /v1/messages/count_tokens, /v1/responses, /v1/chat/completions; GET /v1/models, /v1/models/{id}, /_requests")
	default:
		s.serveNotFound(w, r)
	}
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	ids := s.modelIDs()
	s.record(&Recorded{Time: s.now(), Method: r.Method, Path: r.URL.Path, Header: redactHeader(r.Header), Status: 200})
	if r.Header.Get("Anthropic-Version") != "" {
		data := []any{}
		for _, id := range ids {
			data = append(data, anthropicModel(id))
		}
		first, last := any(nil), any(nil)
		if len(ids) > 0 {
			first, last = ids[0], ids[len(ids)-1]
		}
		writeJSON(w, map[string]any{"data": data, "has_more": false, "first_id": first, "last_id": last})
		return
	}
	var data []any
	for _, id := range ids {
		data = append(data, openaiModel(id))
	}
	writeJSON(w, map[string]any{"object": "list", "data": data})
}

// attempt returns the retry number of this call and where it came from:
// X-Stainless-Retry-Count when it is above 0 (Claude Code sends 0 on every
// try), else a count of the calls with the same canonical path and body.
func (s *Server) attempt(r *http.Request, body []byte) (int, string) {
	if v := r.Header.Get(provider.AttemptHeader); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n, "header"
		}
	}
	return s.count(canonicalKey(r.URL.Path, body)), "counter"
}

// count returns how many requests came with key before this one.
func (s *Server) count(key [32]byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.attempts[key]
	s.attempts[key] = n + 1
	return n
}

// serveModel answers one model request. The request is recorded before
// the first byte of the answer is written, so that a client that has
// seen the answer always finds its request in the log.
func (s *Server) serveModel(w http.ResponseWriter, r *http.Request, f Format) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec := Recorded{Time: s.now(), Method: r.Method, Path: r.URL.Path, Header: redactHeader(r.Header), Format: f}
	if json.Valid(body) {
		rec.Body = body
	}
	fail := func(status int, typ, msg, logMsg string, retryAfter time.Duration) {
		rec.Status, rec.Error = status, logMsg
		s.record(&rec)
		writeError(w, f, status, typ, msg, retryAfter)
	}
	if err != nil {
		fail(400, "", "read body: "+err.Error(), "read body: "+err.Error(), 0)
		return
	}
	rec.Attempt, rec.AttemptSource = s.attempt(r, body)
	conv, err := parseConversation(f, body)
	if err != nil {
		fail(400, "", "scripted model server: "+err.Error(), err.Error(), 0)
		return
	}
	rec.Turn = conv.AssistantTurns
	sc, err := s.set.selectScript(conv)
	if err != nil {
		fail(400, "", "scripted model server: "+err.Error(), err.Error(), 0)
		return
	}
	rec.Script = sc.Name
	if sc.AttemptsBy == AttemptsByTurn && rec.AttemptSource == "counter" {
		// The client rewrites what it retries: count by script and turn.
		rec.Attempt = s.count(sha256.Sum256([]byte(r.URL.Path + "\x00script:" + sc.Name + "\x00turn:" + strconv.Itoa(conv.AssistantTurns))))
		rec.AttemptSource = "turn"
	}
	turn, err := sc.turnFor(conv.AssistantTurns)
	if err != nil {
		fail(400, "", "scripted model server: "+err.Error(), err.Error(), 0)
		return
	}
	for _, a := range turn.Expect {
		if err := a.Check(conv); err != nil {
			msg := fmt.Sprintf("script %s turn %d: %v", sc.Name, conv.AssistantTurns, err)
			fail(400, "", "scripted model server: "+msg, msg, 0)
			return
		}
	}
	ctx := r.Context()
	if turn.Delay > 0 {
		if err := sleepCtx(ctx, time.Duration(turn.Delay)); err != nil {
			rec.Error = "client gone during delay"
			s.record(&rec)
			return
		}
	}
	e := turn.Error
	failing := e != nil && (e.Times == 0 || rec.Attempt < e.Times)
	if failing && ((!e.Drop && !e.MidStream) || !conv.Stream) {
		// A request that is not streamed has no stream to break: a
		// mid-stream error or a drop is an HTTP error for it.
		status := e.Status
		if status == 0 {
			status = http.StatusBadGateway
		}
		fail(status, e.Type, e.Message, fmt.Sprintf("scripted error %d", status), time.Duration(e.RetryAfter))
		return
	}
	rep, err := resolve(sc, conv.AssistantTurns, turn, conv, len(body))
	if err != nil {
		fail(500, "", "scripted model server: "+err.Error(), err.Error(), 0)
		return
	}
	rec.Status = 200
	if !conv.Stream {
		s.record(&rec)
		var obj any
		switch f {
		case FormatAnthropic:
			obj = rep.anthropicMessage()
		case FormatResponses:
			obj = rep.responsesObject(true)
		case FormatChat:
			obj = rep.chatCompletion()
		}
		writeJSON(w, obj)
		return
	}
	em := newEmitter(ctx, w, f != FormatChat, turn)
	if failing {
		em.failAfter = e.AfterEvents
	}
	if failing && e.Drop {
		em.drop = true
		rec.Error = "scripted dropped connection"
	}
	if failing && e.MidStream {
		rec.Error = fmt.Sprintf("scripted mid-stream error %d", e.Status)
		em.midError = func(em *emitter) error {
			typ := errorType(f, e.Status, e.Type)
			msg := e.Message
			if msg == "" {
				msg = statusText(e.Status)
			}
			switch f {
			case FormatAnthropic:
				return em.send("error", map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
			case FormatResponses:
				// Responses ends a failed stream with response.failed, whose
				// response.error says why (Codex acts on it).
				failed := rep.responsesObject(false)
				failed["status"] = "failed"
				failed["error"] = map[string]any{"code": responsesCode(e.Status, e.Type), "message": msg}
				return em.send("response.failed", map[string]any{"type": "response.failed", "sequence_number": em.n, "response": failed})
			}
			return em.send("error", map[string]any{"type": "error", "code": typ, "message": msg, "param": nil,
				"error": map[string]any{"type": typ, "message": msg}})
		}
	}
	seq := s.record(&rec)
	switch f {
	case FormatAnthropic:
		err = writeAnthropic(em, rep)
	case FormatResponses:
		err = writeResponses(em, rep)
	case FormatChat:
		err = writeChat(em, rep)
	}
	if err != nil && !errors.Is(err, errStopStream) && rec.Error == "" {
		s.setError(seq, "stream: "+err.Error())
	}
}

// errorType is the provider error type for a status.
func errorType(f Format, status int, typ string) string {
	if typ != "" {
		return typ
	}
	switch status {
	case 400:
		return "invalid_request_error"
	case 401:
		if f == FormatAnthropic {
			return "authentication_error"
		}
		return "invalid_api_key"
	case 403:
		return "permission_error"
	case 404:
		return "not_found_error"
	case 429:
		return "rate_limit_error"
	case 529, 503:
		return "overloaded_error"
	}
	return "api_error"
}

// writeError answers an HTTP error in the shape of format f.
func writeError(w http.ResponseWriter, f Format, status int, typ, msg string, retryAfter time.Duration) {
	typ = errorType(f, status, typ)
	if msg == "" {
		msg = statusText(status)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(retryAfter.Seconds()))))
		h.Set("Retry-After-Ms", strconv.FormatInt(retryAfter.Milliseconds(), 10))
	}
	if provider.RetryableStatus(status) {
		h.Set("X-Should-Retry", "true")
	}
	w.WriteHeader(status)
	var body any
	if f == FormatAnthropic {
		h.Set("Request-Id", "req_scripted")
		body = map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}, "request_id": "req_scripted"}
	} else {
		code := any(nil)
		if strings.HasSuffix(typ, "_key") || status == 429 {
			code = typ
		}
		otype := typ
		if status == 401 {
			otype = "invalid_request_error"
		}
		body = map[string]any{"error": map[string]any{"message": msg, "type": otype, "param": nil, "code": code}}
	}
	b, _ := encodeJSON(body)
	_, _ = w.Write(append(b, '\n'))
}

// responsesCode is the response.error code of a failed Responses stream:
// the codes the Responses API uses for transient failures, so that a
// client retries them.
func responsesCode(status int, typ string) string {
	switch {
	case typ != "":
		return typ
	case status == 429:
		return "rate_limit_exceeded"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request"
}
