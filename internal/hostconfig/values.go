package hostconfig

import (
	"fmt"
	"reflect"
	"strings"
)

// Value is one present value of an effective configuration, for display.
type Value struct {
	Path   string `json:"path"`
	Value  string `json:"value"`
	Source Source `json:"source"`
}

// Values lists every present value of the merged layer in field order,
// with its source; an array is one value.
func (e Effective) Values() []Value {
	var out []Value
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Struct:
			t := v.Type()
			for i := range t.NumField() {
				tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]
				walk(v.Field(i), join(path, tag))
			}
		case reflect.Pointer:
			if !v.IsNil() {
				out = append(out, Value{Path: path, Value: fmt.Sprint(v.Elem().Interface()), Source: e.Sources[path]})
			}
		case reflect.Slice:
			if !v.IsNil() {
				out = append(out, Value{Path: path, Value: fmt.Sprintf("%+v", v.Interface()), Source: e.Sources[path]})
			}
		case reflect.Map:
			keys := v.MapKeys()
			names := make([]string, 0, len(keys))
			for _, k := range keys {
				names = append(names, k.String())
			}
			for _, k := range sortedKeys(setOf(names)) {
				p := join(path, k)
				out = append(out, Value{Path: p, Value: fmt.Sprint(v.MapIndex(reflect.ValueOf(k)).Interface()), Source: e.Sources[p]})
			}
		}
	}
	walk(reflect.ValueOf(e.Layer), "")
	return out
}

func setOf(xs []string) map[string]bool { return set(xs...) }
