package api

import (
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/aos-run/aos/internal/mission"
)

// OpenAPIVersion is the OpenAPI version of GET /openapi.json.
const OpenAPIVersion = "3.1.0"

// wildcard matches a {name} path parameter in a route pattern.
var wildcard = regexp.MustCompile(`\{([a-zA-Z0-9]+)\}`)

// OpenAPI builds the OpenAPI 3.1 document of the route table. Everything
// in it is derived from the table: request, response and query schemas by
// reflection from the very types the handlers decode and write (openapi_
// schema.go), security from each route's scope, and the error statuses
// from what the route can meet (errorStatuses). A route added to the table
// is documented with no other change.
func (s *Server) OpenAPI() map[string]any {
	g := &schemaGen{defs: map[string]any{}}
	paths := map[string]any{}
	for _, rt := range s.routes {
		path := Prefix + rt.Pattern
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		item[strings.ToLower(rt.Method)] = g.operation(rt)
	}
	return map[string]any{
		"openapi": OpenAPIVersion,
		"info": map[string]any{
			"title":       "aos",
			"version":     s.svc.Version(),
			"description": "The aos API (docs/API.md). Errors have the body {error:{code,message}}.",
			"license":     map[string]any{"name": "See the repository's LICENSE", "identifier": "LicenseRef-aos"},
		},
		"servers": []any{map[string]any{"url": "/", "description": "the aos server itself"}},
		"paths":   paths,
		"components": map[string]any{
			"schemas":   g.defs,
			"responses": map[string]any{"Error": errorResponse(g)},
			"securitySchemes": map[string]any{
				"bearer": map[string]any{"type": "http", "scheme": "bearer",
					"description": "An API token (aos token create) with the route's scope (x-aos-scope)."},
				"session": map[string]any{"type": "apiKey", "in": "cookie", "name": cookiePlain,
					"description": "The owner's browser session, set by login or setup; named " + cookieSecure + " over HTTPS. It holds every scope."},
				"device": map[string]any{"type": "http", "scheme": "bearer",
					"description": "A device token (aosd_…, from a pairing exchange: docs/DEVICES.md). It opens the device channel and nothing else."},
				"csrf": map[string]any{"type": "apiKey", "in": "header", "name": "X-CSRF-Token",
					"description": "The session's CSRF token (from login, setup or /auth/status), required with the session cookie on every mutation."},
			},
		},
	}
}

// operation documents one route.
func (g *schemaGen) operation(rt Route) map[string]any {
	op := map[string]any{
		"operationId": operationID(rt),
		"summary":     rt.Method + " " + rt.Pattern,
		"tags":        []any{strings.SplitN(strings.TrimPrefix(rt.Pattern, "/"), "/", 2)[0]},
	}
	var params []any
	for _, m := range wildcard.FindAllStringSubmatch(rt.Pattern, -1) {
		params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string", "minLength": 1}})
	}
	if rt.Query != nil {
		params = append(params, g.queryParams(reflect.TypeOf(rt.Query))...)
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	op["security"] = security(rt)
	switch {
	case rt.Device:
		op["x-aos-scope"] = "device"
	case !rt.Public:
		op["x-aos-scope"] = rt.Scope
	}
	if rt.Req != nil {
		_, empty := rt.Req.(Empty)
		op["requestBody"] = map[string]any{
			"required": !empty,
			"content":  map[string]any{"application/json": map[string]any{"schema": g.request(reflect.TypeOf(rt.Req))}},
		}
	}
	responses := map[string]any{}
	status := rt.success()
	ok := map[string]any{"description": http.StatusText(status)}
	switch {
	case rt.WebSocket && rt.Device:
		ok["description"] = "Switching Protocols: the device channel (docs/DEVICES.md); one seed-000 JSON request or answer per text frame"
	case rt.WebSocket:
		ok["description"] = "Switching Protocols: the events WebSocket (subprotocol " + Subprotocol + "); one JSON Event per text frame"
	case rt.Resp == nil:
	case reflect.TypeOf(rt.Resp) == reflect.TypeOf([]byte(nil)):
		ok["content"] = map[string]any{"application/octet-stream": map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": "application/octet-stream"}}}
	default:
		ok["content"] = map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(rt.Resp))}}
	}
	responses[strconv.Itoa(status)] = ok
	if rt.WebSocket && !rt.Device {
		op["x-aos-event"] = g.schema(reflect.TypeOf(mission.Event{}))
	}
	for _, code := range rt.errorStatuses() {
		responses[strconv.Itoa(code)] = map[string]any{"$ref": "#/components/responses/Error"}
		if rt.WebSocket && (code == http.StatusBadRequest || code == http.StatusForbidden || code == http.StatusUpgradeRequired) {
			// The WebSocket library refuses a bad handshake or a foreign
			// Origin itself, in plain text.
			responses[strconv.Itoa(code)] = map[string]any{
				"description": "An error, or the WebSocket handshake refused (not a WebSocket request, a foreign Origin) in plain text.",
				"content": map[string]any{
					"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/errorBody"}},
					"text/plain":       map[string]any{"schema": map[string]any{"type": "string"}},
				},
			}
		}
	}
	op["responses"] = responses
	return op
}

// operationID names an operation after its method and pattern
// (getMissionsById for GET /missions/{id}).
func operationID(rt Route) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(rt.Method))
	for _, part := range strings.FieldsFunc(rt.Pattern, func(r rune) bool { return r == '/' || r == '.' || r == '-' || r == '_' }) {
		if m := wildcard.FindStringSubmatch(part); m != nil {
			part = "by_" + m[1]
		}
		for _, w := range strings.Split(part, "_") {
			if w != "" {
				b.WriteString(strings.ToUpper(w[:1]) + w[1:])
			}
		}
	}
	return b.String()
}

// security is the credentials a route accepts: none when public; the
// owner's session only for owner routes (an API token gets 403); else a
// bearer token or the session. A session's mutation needs its CSRF token
// too.
func security(rt Route) []any {
	if rt.Public {
		return []any{}
	}
	if rt.Device {
		return []any{map[string]any{"device": []any{}}}
	}
	session := map[string]any{"session": []any{}}
	if !safeMethod(rt.Method) {
		session["csrf"] = []any{}
	}
	if rt.Scope == mission.ScopeOwner {
		return []any{session}
	}
	return []any{map[string]any{"bearer": []any{}}, session}
}

// success is the route's success status.
func (rt Route) success() int {
	switch {
	case rt.WebSocket:
		return http.StatusSwitchingProtocols
	case rt.Status != 0:
		return rt.Status
	}
	return http.StatusOK
}

// errorStatuses are the error statuses a route can answer, each with the
// error body: what every route can meet (500), what authentication and
// input checks give, and the route's own Errors.
func (rt Route) errorStatuses() []int {
	out := []int{http.StatusInternalServerError}
	if !rt.Public {
		out = append(out, http.StatusUnauthorized, http.StatusForbidden)
	} else if !safeMethod(rt.Method) {
		out = append(out, http.StatusForbidden) // a foreign Origin
	}
	if rt.Req != nil || rt.Query != nil || strings.Contains(rt.Pattern, "{") {
		out = append(out, http.StatusBadRequest)
	}
	if strings.Contains(rt.Pattern, "{") {
		out = append(out, http.StatusNotFound)
	}
	if rt.WebSocket {
		out = append(out, http.StatusUpgradeRequired)
	}
	out = append(out, rt.Errors...)
	slices.Sort(out)
	return slices.Compact(out)
}

// errorResponse is the one error response every error status refers to.
func errorResponse(g *schemaGen) map[string]any {
	return map[string]any{
		"description": "An error: its code (stable, machine-readable) and a message safe to show.",
		"content":     map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(errorBody{}))}},
	}
}

func (s *Server) openAPI(w http.ResponseWriter, _ *http.Request, _ mission.Principal) error {
	writeJSON(w, http.StatusOK, s.OpenAPI())
	return nil
}
