package script

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/aos-run/aos/internal/provider"
)

// encodeJSON marshals v without HTML escaping: a tool call's arguments
// (JSON inside a JSON string) reach the client as the script wrote them,
// "<" and "&" included, as real providers send them.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// writeJSON answers 200 with v.
func writeJSON(w http.ResponseWriter, v any) {
	b, err := encodeJSON(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(b, '\n'))
}

// statusText is an error status's message: Go has no text for 529.
func statusText(status int) string {
	if status == 529 {
		return "Overloaded"
	}
	return http.StatusText(status)
}

// canonicalKey identifies a call across its retries: the path and the body
// with object keys sorted (encoding/json sorts map keys), so a client that
// reorders keys on every try (Codex's client_metadata) is still counted.
// A body that is not JSON is taken as it is.
func canonicalKey(path string, body []byte) [32]byte {
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err == nil && !dec.More() {
		if b, err := json.Marshal(v); err == nil {
			body = b
		}
	}
	return sha256.Sum256(append([]byte(path+"\x00"), body...))
}

// formatOfRoute is the provider whose error shape an unknown or failed
// route answers in: Anthropic for its paths or headers, OpenAI otherwise.
func formatOfRoute(r *http.Request) Format {
	if strings.HasPrefix(r.URL.Path, "/v1/messages") || r.Header.Get("Anthropic-Version") != "" {
		return FormatAnthropic
	}
	return FormatResponses
}

// serveNotFound answers an unknown route with the provider's JSON error.
func (s *Server) serveNotFound(w http.ResponseWriter, r *http.Request) {
	s.record(&Recorded{Time: s.now(), Method: r.Method, Path: r.URL.Path, Header: redactHeader(r.Header), Status: 404, Error: "unknown route"})
	writeError(w, formatOfRoute(r), http.StatusNotFound, "", "scripted model server: no route "+r.Method+" "+r.URL.Path, 0)
}

// modelIDs are the models the server serves.
func (s *Server) modelIDs() []string {
	var ids []string
	for _, sc := range s.set.Scripts {
		ids = append(ids, provider.ScriptPrefix+sc.Name)
	}
	return append(ids, s.set.Models...)
}

func anthropicModel(id string) map[string]any {
	return map[string]any{"type": "model", "id": id, "display_name": id, "created_at": "2026-01-01T00:00:00Z"}
}

func openaiModel(id string) map[string]any {
	return map[string]any{"id": id, "object": "model", "created": 1767225600, "owned_by": "aos-script"}
}

// serveModel1 answers GET /v1/models/{id} in the caller's shape, or 404.
func (s *Server) serveModel1(w http.ResponseWriter, r *http.Request, id string) {
	f := formatOfRoute(r)
	for _, m := range s.modelIDs() {
		if m != id {
			continue
		}
		s.record(&Recorded{Time: s.now(), Method: r.Method, Path: r.URL.Path, Header: redactHeader(r.Header), Status: 200})
		if f == FormatAnthropic {
			writeJSON(w, anthropicModel(id))
		} else {
			writeJSON(w, openaiModel(id))
		}
		return
	}
	s.record(&Recorded{Time: s.now(), Method: r.Method, Path: r.URL.Path, Header: redactHeader(r.Header), Status: 404, Error: "unknown model"})
	writeError(w, f, http.StatusNotFound, "", "model: "+id, 0)
}

// serveCountTokens answers POST /v1/messages/count_tokens with the same
// estimate a scripted turn without usage reports: a quarter of the body's
// bytes, plus one.
func (s *Server) serveCountTokens(w http.ResponseWriter, r *http.Request, body []byte, readErr error) {
	rec := Recorded{Time: s.now(), Method: r.Method, Path: r.URL.Path, Header: redactHeader(r.Header), Format: FormatAnthropic}
	if json.Valid(body) {
		rec.Body = body
	}
	var req struct {
		Model    string          `json:"model"`
		Messages json.RawMessage `json:"messages"`
	}
	if readErr != nil || json.Unmarshal(body, &req) != nil || req.Model == "" || len(req.Messages) == 0 {
		rec.Status, rec.Error = 400, "bad count_tokens request"
		s.record(&rec)
		writeError(w, FormatAnthropic, 400, "", "count_tokens: model and messages are required", 0)
		return
	}
	rec.Status = 200
	s.record(&rec)
	writeJSON(w, map[string]any{"input_tokens": len(body)/4 + 1})
}
