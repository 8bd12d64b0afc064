package tool

import "encoding/json"

// prop is one schema property.
type prop struct {
	name   string
	schema map[string]any
}

// object builds a strict object schema: every property required and no
// others allowed, as OpenAI strict mode demands.
func object(props ...prop) map[string]any {
	p := map[string]any{}
	req := []string{}
	for _, x := range props {
		p[x.name] = x.schema
		req = append(req, x.name)
	}
	return map[string]any{"type": "object", "properties": p, "required": req, "additionalProperties": false}
}

func mustJSON(v map[string]any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // schemas are literals; a failure is a programming error
	}
	return b
}

func typed(name, typ, desc string, nullable bool) prop {
	var t any = typ
	if nullable {
		t = []string{typ, "null"}
	}
	return prop{name, map[string]any{"type": t, "description": desc}}
}

func str(name, desc string) prop     { return typed(name, "string", desc, false) }
func optStr(name, desc string) prop  { return typed(name, "string", desc, true) }
func optInt(name, desc string) prop  { return typed(name, "integer", desc, true) }
func boolean(name, desc string) prop { return typed(name, "boolean", desc, false) }
func optBool(name, desc string) prop { return typed(name, "boolean", desc, true) }

func enum(name, desc string, values ...string) prop {
	return prop{name, map[string]any{"type": "string", "enum": values, "description": desc}}
}

func array(name, desc string, items map[string]any, nullable bool) prop {
	var t any = "array"
	if nullable {
		t = []string{"array", "null"}
	}
	return prop{name, map[string]any{"type": t, "items": items, "description": desc}}
}

var stringItems = map[string]any{"type": "string"}
