package api

import (
	"encoding/json"
	"reflect"
	"strings"
)

// schemaGen turns Go types into JSON Schemas (2020-12, as OpenAPI 3.1
// has them), named structs as components referenced by $ref.
//
// What it reads from a struct field:
//   - the json tag: the name; omitempty makes the field optional, else it
//     is required (encoding/json always writes it);
//   - a pointer, nil slice or nil map writes null: such a field's schema
//     admits null unless it is omitempty (then nil is omitted, never null);
//   - the enum tag, `enum:"a,b"`: the closed set of a string's values;
//   - the query tag, on a route's Query struct: a query parameter's name.
//
// A struct's schema has additionalProperties false: encoding/json writes
// no other field, and decodeBody refuses any other.
//
// A request body's types are documented apart (named …Input unless the
// name ends in Request), since decoding never requires a field: there a
// pointer field is optional, while a response always writes it.
type schemaGen struct {
	defs  map[string]any
	input bool // documenting a request body
}

// request returns the schema of a request body of type t.
func (g *schemaGen) request(t reflect.Type) map[string]any {
	in := &schemaGen{defs: g.defs, input: true}
	return in.schema(t)
}

var (
	rawMessage = reflect.TypeOf(json.RawMessage{})
	marshaler  = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	switch {
	case t == rawMessage:
		return g.anyJSON("any JSON value")
	case t.Implements(marshaler):
		return g.anyJSON("any JSON value (" + t.String() + ")")
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(g.schema(t.Elem()))
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Uint8, reflect.Uint16:
		return map[string]any{"type": "integer", "format": "int32"}
	case reflect.Int, reflect.Int64, reflect.Uint, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer", "format": "int64"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number", "format": "double"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"}
		}
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Interface:
		return g.anyJSON("any JSON value")
	case reflect.Struct:
		name := t.Name()
		if name == "" {
			return g.object(t)
		}
		if g.input && !strings.HasSuffix(name, "Request") {
			name += "Input"
		}
		if _, ok := g.defs[name]; !ok {
			g.defs[name] = map[string]any{} // placeholder against recursion
			g.defs[name] = g.object(t)
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	return map[string]any{}
}

// anyJSON refers to JSONValue, the schema of any JSON value, null
// included, spelled out type by type (some validators take an empty
// schema for a non-null value, and a linter rightly flags an empty one in
// an anyOf).
func (g *schemaGen) anyJSON(desc string) map[string]any {
	g.defs["JSONValue"] = map[string]any{"description": "Any JSON value.", "anyOf": []any{
		map[string]any{"type": "object", "additionalProperties": true},
		map[string]any{"type": "array", "items": map[string]any{}},
		map[string]any{"type": "string"},
		map[string]any{"type": "number"},
		map[string]any{"type": "boolean"},
		map[string]any{"type": "null"},
	}}
	return map[string]any{"$ref": "#/components/schemas/JSONValue", "description": desc}
}

// nullable makes s admit null too.
func nullable(s map[string]any) map[string]any {
	if typ, ok := s["type"].(string); ok && s["enum"] == nil {
		out := make(map[string]any, len(s))
		for k, v := range s {
			out[k] = v
		}
		out["type"] = []any{typ, "null"}
		return out
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

// field is one JSON field of a struct.
type field struct {
	name      string
	omitempty bool
	f         reflect.StructField
}

// fields lists t's JSON fields as encoding/json sees them, embedded
// structs' fields promoted.
func fields(t reflect.Type) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			out = append(out, fields(f.Type)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, field{name: name, omitempty: strings.Contains(opts, "omitempty"), f: f})
	}
	return out
}

func (g *schemaGen) object(t reflect.Type) map[string]any {
	props := map[string]any{}
	required := []any{}
	for _, fl := range fields(t) {
		s := g.schema(fl.f.Type)
		if e := fl.f.Tag.Get("enum"); e != "" {
			s = enum(s, e)
		}
		switch k := fl.f.Type.Kind(); {
		case fl.omitempty:
		case k == reflect.Slice && fl.f.Type.Elem().Kind() != reflect.Uint8, k == reflect.Map:
			s = nullable(s) // a nil slice or map is written as null
		}
		props[fl.name] = s
		if !fl.omitempty && !(g.input && fl.f.Type.Kind() == reflect.Pointer) {
			required = append(required, fl.name)
		}
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// enum closes a string schema (or an array of strings) to the values of
// an enum tag.
func enum(s map[string]any, tag string) map[string]any {
	var vals []any
	for _, v := range strings.Split(tag, ",") {
		vals = append(vals, v)
	}
	if s["type"] == "array" {
		items, _ := s["items"].(map[string]any)
		return map[string]any{"type": "array", "items": enum(items, tag)}
	}
	out := map[string]any{}
	for k, v := range s {
		out[k] = v
	}
	out["enum"] = vals
	return out
}

// queryParams documents a route's Query struct: one optional parameter
// per field with a query tag.
func (g *schemaGen) queryParams(t reflect.Type) []any {
	var out []any
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name := f.Tag.Get("query")
		if name == "" {
			continue
		}
		s := g.schema(f.Type)
		if e := f.Tag.Get("enum"); e != "" {
			s = enum(s, e)
		}
		p := map[string]any{"name": name, "in": "query", "required": false, "schema": s}
		if d := f.Tag.Get("doc"); d != "" {
			p["description"] = d
		}
		out = append(out, p)
	}
	return out
}
