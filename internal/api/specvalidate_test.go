package api_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/aos-run/aos/internal/api"
)

// Every exchange a test has with a bundle's server goes through
// specRecorder; at the test's cleanup, validateExchanges checks each
// response against the spec the server publishes (GET /openapi.json) with
// kin-openapi's openapi3filter, a validator that is not ours: status
// documented, body matching its schema, content type. A request the server
// accepted (2xx/101) is checked too: its body, path and query parameters
// (each one declared) and its credentials are what the spec says.

// exchange is one request and its response, as the server saw them.
type exchange struct {
	method, target string
	reqHeader      http.Header
	reqBody        []byte
	status         int
	respHeader     http.Header
	respBody       []byte
}

// specRecorder wraps h, recording every API exchange into b.
func (b *bundle) specRecorder(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, api.Prefix+"/") {
			h.ServeHTTP(w, r) // the console and /metrics are not the API
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recordingWriter{ResponseWriter: w}
		h.ServeHTTP(rec, r)
		x := exchange{method: r.Method, target: r.URL.RequestURI(), reqHeader: r.Header.Clone(), reqBody: body,
			status: rec.status, respHeader: w.Header().Clone(), respBody: rec.body.Bytes()}
		if x.status == 0 {
			x.status = http.StatusOK
		}
		b.mu.Lock()
		b.exchanges = append(b.exchanges, x)
		b.mu.Unlock()
	})
}

// recordingWriter keeps a response's status and body on their way out; a
// hijacked connection (the events WebSocket) keeps its 101.
type recordingWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *recordingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	w.body.Write(p)
	return w.ResponseWriter.Write(p)
}

func (w *recordingWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *recordingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("not a hijacker")
	}
	return hj.Hijack()
}

func (w *recordingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// fetchSpec reads the published document once the tokens exist.
func (b *bundle) fetchSpec() {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.srv.URL+api.Prefix+"/openapi.json", nil)
	req.Header.Set("Authorization", "Bearer "+b.read)
	resp, err := b.srv.Client().Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	b.spec, err = io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		b.t.Fatalf("GET /openapi.json: %d %v", resp.StatusCode, err)
	}
}

// validateExchanges checks every recorded exchange against the spec.
func (b *bundle) validateExchanges() {
	b.mu.Lock()
	xs := b.exchanges
	b.mu.Unlock()
	if len(b.spec) == 0 || len(xs) == 0 {
		return
	}
	ctx := context.Background()
	doc, err := openapi3.NewLoader().LoadFromData(b.spec)
	if err != nil {
		b.t.Errorf("the published OpenAPI document does not load: %v", err)
		return
	}
	if err := doc.Validate(ctx); err != nil {
		b.t.Errorf("the published OpenAPI document is not valid: %v", err)
		return
	}
	// The document's server is "/", relative to where it was fetched.
	doc.Servers = openapi3.Servers{{URL: b.srv.URL + "/"}}
	router, err := legacy.NewRouter(doc)
	if err != nil {
		b.t.Errorf("no router for the published OpenAPI document: %v", err)
		return
	}
	seen := map[string]bool{}
	for _, x := range xs {
		if err := validateExchange(ctx, router, b.srv.URL, x); err != nil {
			msg := fmt.Sprintf("%s %s → %d: %v", x.method, x.target, x.status, err)
			if len(msg) > 1500 {
				msg = msg[:1500] + "…"
			}
			if !seen[msg] {
				seen[msg] = true
				b.t.Errorf("response differs from the published OpenAPI document: %s", msg)
			}
		}
	}
}

// validateExchange checks one exchange.
func validateExchange(ctx context.Context, router routers.Router, base string, x exchange) error {
	u, err := url.Parse(base + x.target)
	if err != nil {
		return err
	}
	req := httptest.NewRequest(x.method, u.String(), bytes.NewReader(x.reqBody))
	req.Header = x.reqHeader.Clone()
	route, params, err := router.FindRoute(req)
	if err != nil {
		if x.status == http.StatusNotFound || x.status == http.StatusUnauthorized {
			return nil // the catch-all: no such route (authenticated first)
		}
		return fmt.Errorf("no operation in the document: %v", err)
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: presentCredential}}
	if x.status/100 == 2 || x.status == http.StatusSwitchingProtocols {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			return fmt.Errorf("the server accepted a request the document refuses: %v", err)
		}
		if err := queryDeclared(route.Operation, req.URL.Query()); err != nil {
			return err
		}
	}
	in.Options = &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}
	return openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: x.status, Header: x.respHeader, Body: io.NopCloser(bytes.NewReader(x.respBody)),
		Options: in.Options})
}

// queryDeclared checks every query parameter sent is declared:
// openapi3filter ignores undeclared ones.
func queryDeclared(op *openapi3.Operation, q url.Values) error {
	for name := range q {
		if op.Parameters.GetByInAndName("query", name) == nil {
			return fmt.Errorf("query parameter %q is not declared", name)
		}
	}
	return nil
}

// presentCredential checks the request carries the credential a security
// scheme names.
func presentCredential(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	r := in.RequestValidationInput.Request
	var ok bool
	switch s := in.SecurityScheme; {
	case s.Type == "http" && s.Scheme == "bearer":
		ok = strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") || strings.Contains(r.Header.Get("Sec-WebSocket-Protocol"), "bearer.")
	case s.Type == "apiKey" && s.In == "cookie":
		for _, c := range r.Cookies() {
			ok = ok || ((c.Name == s.Name || c.Name == "__Host-"+s.Name) && c.Value != "")
		}
	case s.Type == "apiKey" && s.In == "header":
		ok = r.Header.Get(s.Name) != ""
	}
	if !ok {
		return in.NewError(nil)
	}
	return nil
}
