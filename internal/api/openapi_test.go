package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/aos-run/aos/internal/api"
	"github.com/aos-run/aos/internal/store/storetest"
)

// TestOpenAPIMatchesRoutes: /openapi.json has exactly the route table's
// operations, with path parameters, security, and body schemas built from
// the handlers' own types.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.New(t, "sqlite"))
	code, body := b.do("GET", "/openapi.json", nil, b.read)
	if code != 200 {
		t.Fatalf("GET /openapi.json = %d %s", code, body)
	}
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
		Comps   struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || doc.OpenAPI != "3.1.0" {
		t.Fatalf("not an OpenAPI 3.1 document: %v", err)
	}
	ops := 0
	for _, item := range doc.Paths {
		ops += len(item)
	}
	routes := b.api.Routes()
	if ops != len(routes) {
		t.Errorf("document has %d operations, route table %d", ops, len(routes))
	}
	for _, rt := range routes {
		op, ok := doc.Paths[api.Prefix+rt.Pattern][strings.ToLower(rt.Method)]
		if !ok {
			t.Errorf("%s %s missing from the document", rt.Method, rt.Pattern)
			continue
		}
		if strings.Contains(rt.Pattern, "{") && op["parameters"] == nil {
			t.Errorf("%s %s: path parameters missing", rt.Method, rt.Pattern)
		}
		if sec, _ := op["security"].([]any); (len(sec) == 0) != rt.Public {
			t.Errorf("%s %s: security %v, public %v", rt.Method, rt.Pattern, op["security"], rt.Public)
		}
		if (rt.Req != nil) != (op["requestBody"] != nil) {
			t.Errorf("%s %s: request body documented %v, handler decodes one %v", rt.Method, rt.Pattern, op["requestBody"] != nil, rt.Req != nil)
		}
	}
	// The create body's schema is the service's CreateRequest.
	cr := doc.Comps.Schemas["CreateRequest"]
	props, _ := cr["properties"].(map[string]any)
	if props["objective"] == nil || props["workspace"] == nil {
		t.Errorf("CreateRequest schema = %v", cr)
	}
}

var update = flag.Bool("update", false, "rewrite the golden files: docs/openapi.json from the server, the device fixture's expected answers")

// goldenSpec is the committed copy of the document: the console's types
// are generated from it and the linter reads it (scripts/console-build.sh).
const goldenSpec = "../../docs/openapi.json"

// TestOpenAPIGolden: docs/openapi.json is what GET /openapi.json serves
// (its version aside). After changing a route or a wire type, run
// go test ./internal/api -run TestOpenAPIGolden -update, then
// scripts/console-build.sh to regenerate the console's types.
func TestOpenAPIGolden(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.New(t, "sqlite"))
	code, body := b.do("GET", "/openapi.json", nil, b.read)
	if code != 200 {
		t.Fatalf("GET /openapi.json = %d", code)
	}
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	doc["info"].(map[string]any)["version"] = "dev"
	got, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(goldenSpec, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(goldenSpec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/openapi.json differs from GET /openapi.json: run go test ./internal/api -run TestOpenAPIGolden -update, then scripts/console-build.sh")
	}
}

// TestOpenAPIExact checks what the issue found missing: query parameters,
// closed request bodies, int64, enums, owner routes on the session only,
// the events WebSocket as an upgrade, and an error body for each status.
func TestOpenAPIExact(t *testing.T) {
	t.Parallel()
	b := setup(t, storetest.New(t, "sqlite"))
	_, body := b.do("GET", "/openapi.json", nil, b.read)
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct{ Name, In string }
			Security   []map[string]any
			Responses  map[string]map[string]any
		}
		Components struct {
			Schemas map[string]struct {
				AdditionalProperties *bool                     `json:"additionalProperties"`
				Properties           map[string]map[string]any `json:"properties"`
			}
		}
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatal(err)
	}
	op := func(m, p string) struct {
		Parameters []struct{ Name, In string }
		Security   []map[string]any
		Responses  map[string]map[string]any
	} {
		o, ok := doc.Paths[api.Prefix+p][m]
		if !ok {
			t.Fatalf("%s %s missing", m, p)
		}
		return o
	}
	hasParam := func(m, p, name string) {
		for _, q := range op(m, p).Parameters {
			if q.Name == name && q.In == "query" {
				return
			}
		}
		t.Errorf("%s %s: query parameter %s not declared", m, p, name)
	}
	hasParam("get", "/missions", "status")
	hasParam("get", "/missions", "limit")
	hasParam("get", "/runs/{id}/steps", "after")
	hasParam("get", "/events", "cursor")
	if ap := doc.Components.Schemas["CreateRequest"].AdditionalProperties; ap == nil || *ap {
		t.Errorf("CreateRequest admits unknown fields; the server refuses them")
	}
	if f := doc.Components.Schemas["Mission"].Properties["createdAt"]["format"]; f != "int64" {
		t.Errorf("Mission.createdAt format = %v", f)
	}
	for _, c := range []struct{ schema, prop string }{{"Mission", "status"}, {"CreateRequest", "effort"}, {"CreateRequest", "network"}, {"Rule", "decision"}, {"Project", "mode"}, {"Wait", "status"}} {
		if doc.Components.Schemas[c.schema].Properties[c.prop]["enum"] == nil {
			t.Errorf("%s.%s has no enum", c.schema, c.prop)
		}
	}
	if sec := op("get", "/tokens").Security; len(sec) != 1 || sec[0]["session"] == nil || sec[0]["bearer"] != nil {
		t.Errorf("GET /tokens (owner only) security = %v, want the session alone", sec)
	}
	if sec := op("post", "/missions").Security; len(sec) != 2 || sec[1]["csrf"] == nil {
		t.Errorf("POST /missions security = %v, want bearer or session+csrf", sec)
	}
	ev := op("get", "/events").Responses
	if ev["101"] == nil || ev["200"] != nil {
		t.Errorf("GET /events responses = %v, want 101 and no 200", ev)
	}
	for _, code := range []string{"400", "401", "403", "404", "409", "429", "500"} {
		if op("post", "/missions").Responses[code] == nil {
			t.Errorf("POST /missions: no %s response", code)
		}
	}
	if op("delete", "/policy/rules/{id}").Responses["204"] == nil {
		t.Errorf("DELETE /policy/rules/{id}: no 204")
	}
}
