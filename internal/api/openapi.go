package api

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/aos-run/aos/internal/mission"
)

// OpenAPI builds the OpenAPI 3.1 document of the route table, with the
// request and response schemas derived by reflection from the same types
// the handlers decode and write.
func (s *Server) OpenAPI() map[string]any {
	g := &schemaGen{defs: map[string]any{}}
	paths := map[string]any{}
	wild := regexp.MustCompile(`\{([a-zA-Z0-9]+)\}`)
	for _, rt := range s.routes {
		op := map[string]any{"operationId": strings.ToLower(rt.Method) + wild.ReplaceAllString(strings.ReplaceAll(rt.Pattern, "/", "_"), "by_$1")}
		var params []any
		for _, m := range wild.FindAllStringSubmatch(rt.Pattern, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if rt.Public {
			op["security"] = []any{}
		} else {
			op["security"] = []any{map[string]any{"bearer": []any{}}}
			op["x-aos-scope"] = rt.Scope
		}
		if rt.Req != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(rt.Req))}}}
		}
		status := rt.Status
		if status == 0 {
			status = http.StatusOK
		}
		resp := map[string]any{"description": http.StatusText(status)}
		if rt.Resp != nil {
			resp["content"] = map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(rt.Resp))}}
		}
		op["responses"] = map[string]any{
			strconv.Itoa(status): resp,
			"default":            map[string]any{"description": "error", "content": map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(errorBody{}))}}},
		}
		path := Prefix + rt.Pattern
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		item[strings.ToLower(rt.Method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info":    map[string]any{"title": "aos", "version": s.svc.Version()},
		"paths":   paths,
		"components": map[string]any{
			"schemas":         g.defs,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "An API token: aos token create"}},
		},
	}
}

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request, _ mission.Principal) error {
	writeJSON(w, http.StatusOK, s.OpenAPI())
	return nil
}

// schemaGen turns Go types into JSON Schemas, named structs as
// components referenced by $ref.
type schemaGen struct {
	defs map[string]any
}

var rawMessage = reflect.TypeOf(json.RawMessage{})

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	switch {
	case t == rawMessage:
		return map[string]any{}
	case t.Kind() == reflect.Pointer:
		inner := g.schema(t.Elem())
		return map[string]any{"oneOf": []any{inner, map[string]any{"type": "null"}}}
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.Slice, reflect.Array:
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Struct:
		name := t.Name()
		if name == "" {
			return g.object(t)
		}
		if _, ok := g.defs[name]; !ok {
			g.defs[name] = map[string]any{} // placeholder against recursion
			g.defs[name] = g.object(t)
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	return map[string]any{}
}

func (g *schemaGen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	var required []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			emb := g.object(f.Type)
			for k, v := range emb["properties"].(map[string]any) {
				props[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.schema(f.Type)
		if !strings.Contains(opts, "omitempty") && f.Type.Kind() != reflect.Pointer {
			required = append(required, name)
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}
