package api_test

import (
	"encoding/json"
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
